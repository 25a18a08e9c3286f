package io.rdmacomm.ucx.ffm;

/** Prints {@link Ucx#unavailabilityCause()} of a fresh JVM, for {@link AvailabilityProbeTest}. */
public final class ProbeProcess {
  private ProbeProcess() {}

  public static void main(String[] args) {
    System.out.println("cause: " + Ucx.unavailabilityCause().orElse("none"));
    try {
      UcpContext.create().close();
      System.out.println("context: created");
    } catch (IllegalStateException e) {
      System.out.println("context: " + e.getMessage());
    }
  }
}
