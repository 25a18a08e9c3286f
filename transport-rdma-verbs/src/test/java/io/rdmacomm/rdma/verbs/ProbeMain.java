package io.rdmacomm.rdma.verbs;

/** Prints the verbs probe's answer of a fresh JVM; {@link VerbsProbeTest} starts it with different JVM flags. */
final class ProbeMain {
    private ProbeMain() {
    }

    public static void main(String[] args) {
        System.out.println(VerbsProbe.system().unavailabilityCause().orElse("available"));
    }
}
