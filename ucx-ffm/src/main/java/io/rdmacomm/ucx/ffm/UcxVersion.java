package io.rdmacomm.ucx.ffm;

/**
 * Version of the libucp that was loaded, as reported by {@code ucp_get_version}.
 *
 * @param major   major version (1 for every supported release)
 * @param minor   minor version
 * @param release release (patch) number
 */
public record UcxVersion(int major, int minor, int release) {
  @Override
  public String toString() {
    return major + "." + minor + "." + release;
  }
}
