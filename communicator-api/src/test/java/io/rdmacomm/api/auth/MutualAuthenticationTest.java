package io.rdmacomm.api.auth;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmacomm.api.Endpoint;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

@Timeout(10)
class MutualAuthenticationTest {
    private static final SharedSecret SECRET = secret("correct horse battery staple");
    private static final SharedSecret OTHER = secret("incorrect horse battery staple");

    private static SharedSecret secret(String text) {
        return SharedSecret.fromEnvironment("S", Map.of("S", text));
    }

    @Test
    void peersWithTheSameSecretAcceptEachOther() throws Exception {
        MutualAuthentication.Server server = new MutualAuthentication.Server(SECRET, "client");
        MutualAuthentication.Client client = new MutualAuthentication.Client(SECRET, "server");
        byte[] answer = server.answer(client.proof(server.challenge()));
        server.checkAccepted();
        client.check(answer);
    }

    @Test
    void aWrongSecretIsRefusedAndLearnsNoServerProof() {
        MutualAuthentication.Server server = new MutualAuthentication.Server(SECRET, "client");
        MutualAuthentication.Client client = new MutualAuthentication.Client(OTHER, "server");
        byte[] answer = server.answer(client.proof(server.challenge()));
        assertTrue(assertThrows(AuthenticationException.class, server::checkAccepted).getMessage()
                .contains("does not match"));
        assertArrayEquals(new byte[MutualAuthentication.MAC_BYTES], Arrays.copyOfRange(answer, 1, answer.length),
                "a refused peer gets no MAC");
        assertTrue(assertThrows(AuthenticationException.class, () -> client.check(answer)).getMessage()
                .contains("refused our authentication"));
    }

    @Test
    void aServerWithoutTheSecretCannotPassTheClientsCheck() throws Exception {
        MutualAuthentication.Server impostor = new MutualAuthentication.Server(OTHER, "client");
        MutualAuthentication.Client client = new MutualAuthentication.Client(SECRET, "server");
        client.proof(impostor.challenge());
        byte[] forged = new byte[MutualAuthentication.ANSWER_BYTES]; // status 0, any MAC
        assertTrue(assertThrows(AuthenticationException.class, () -> client.check(forged)).getMessage()
                .contains("did not prove"));
    }

    @Test
    void aRecordedProofIsWorthlessAgainstAFreshChallenge() {
        MutualAuthentication.Server first = new MutualAuthentication.Server(SECRET, "client");
        byte[] recorded = new MutualAuthentication.Client(SECRET, "server").proof(first.challenge());
        first.answer(recorded);
        MutualAuthentication.Server second = new MutualAuthentication.Server(SECRET, "client");
        assertFalse(Arrays.equals(first.challenge(), second.challenge()), "fresh nonces");
        second.answer(recorded);
        assertThrows(AuthenticationException.class, second::checkAccepted);
    }

    @Test
    void secretsComeFromAFileOrAVariableNamedByTheEndpointAndAreNeverPrinted(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("Secret.key");
        Files.writeString(file, "correct horse battery staple\n");
        SharedSecret fromFile = SharedSecret.of(Endpoint.parse("tcp://127.0.0.1:1?secretFile=" + file)).orElseThrow();
        assertArrayEquals("correct horse battery staple".getBytes(StandardCharsets.UTF_8), fromFile.key(),
                "the file's name keeps its case and the trailing newline is dropped");
        assertFalse(fromFile.toString().contains("horse"), fromFile.toString());
        SharedSecret fromEnv = SharedSecret.of(Endpoint.parse("tcp://127.0.0.1:1?secretEnv=RDMACOMM_Key"),
                Map.of("RDMACOMM_Key", "correct horse battery staple")).orElseThrow();
        assertArrayEquals(fromFile.key(), fromEnv.key());
        assertTrue(SharedSecret.of(Endpoint.parse("tcp://127.0.0.1:1")).isEmpty());
    }

    @Test
    void badSecretOptionsAreClearErrorsThatNameTheSourceNotTheSecret(@TempDir Path dir) throws Exception {
        Path shortFile = dir.resolve("short");
        Files.writeString(shortFile, "hunter2");
        String e1 = assertThrows(IllegalArgumentException.class,
                () -> SharedSecret.of(Endpoint.parse("tcp://h:1?secretFile=" + shortFile))).getMessage();
        assertTrue(e1.contains("at least 16") && !e1.contains("hunter2"), e1);
        String e2 = assertThrows(IllegalArgumentException.class, () -> SharedSecret.of(
                Endpoint.parse("tcp://h:1?secretEnv=NOPE"), Map.of())).getMessage();
        assertTrue(e2.contains("NOPE") && e2.contains("not set"), e2);
        String e3 = assertThrows(IllegalArgumentException.class, () -> SharedSecret.of(
                Endpoint.parse("tcp://h:1?secretEnv=A&secretFile=/x"), Map.of())).getMessage();
        assertTrue(e3.contains("both"), e3);
        String e4 = assertThrows(IllegalArgumentException.class, () -> SharedSecret.of(
                Endpoint.parse("tcp://h:1?secretFile=" + dir.resolve("missing")))).getMessage();
        assertTrue(e4.contains("missing"), e4);
        assertEquals(IllegalArgumentException.class, assertThrows(IllegalArgumentException.class,
                () -> Endpoint.parse("local://x?secretFile=/x")).getClass(), "only transports that authenticate");
    }
}
