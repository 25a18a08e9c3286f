package io.rdmacomm.kvstore;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

/**
 * A client process for the kill tests: puts and gets large values in a loop and says "running" after the first
 * round, so the test can kill it mid-operation (the values are made once: the loop is all transfers). Stops by itself after a bounded number of rounds.
 */
public final class ChurnClient {
    private ChurnClient() {
    }

    public static void main(String[] args) throws Exception {
        String server = args[0];
        int size = Integer.parseInt(args[1]);
        try (KvClient kv = KvClient.connect(server, KvClient.Options.defaults().withBuffer(size).withName("churn")
                .withBusyPoll(Duration.ZERO))) {
            ByteBuffer[] values = {Workloads.value(1, 7, size), Workloads.value(2, 7, size)};
            for (int i = 0; i < 100_000; i++) {
                byte[] key = ("churn-" + (i % 4)).getBytes(StandardCharsets.US_ASCII);
                kv.put(key, values[i % 2]);
                if (kv.get(key).remaining() != size) {
                    throw new IllegalStateException("GET returned the wrong length");
                }
                if (i == 0) {
                    System.out.println("running");
                    System.out.flush();
                }
            }
        }
    }
}
