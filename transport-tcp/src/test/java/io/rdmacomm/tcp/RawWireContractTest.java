package io.rdmacomm.tcp;

import io.rdmacomm.testkit.CommunicatorContractTest;
import io.rdmacomm.testkit.TransportUnderTest;
import java.util.Map;
import org.junit.jupiter.api.extension.ConditionEvaluationResult;
import org.junit.jupiter.api.extension.ExecutionCondition;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * The stream contract on {@code wire=raw}, except the two tests about a handshake: a raw stream has none, so a
 * silent server that the kernel accepts for is a connected peer (no connect timeout can fire), and garbage is just
 * stream bytes for the application to judge (the GVirtuS backend ends such a session; see the gvirtus module).
 * Remote memory is refused on this wire, so {@code RemoteMemoryContractTest} does not apply.
 */
@ExtendWith(RawWireContractTest.NoHandshake.class)
class RawWireContractTest extends CommunicatorContractTest {
    RawWireContractTest() {
        super(TransportUnderTest.of("tcp://127.0.0.1:0?wire=raw"));
    }

    static final class NoHandshake implements ExecutionCondition {
        private static final Map<String, String> NOT_FOR_RAW = Map.of(
                "connectTimesOutAgainstAServerThatNeverAnswersTheHandshake",
                "wire=raw has no handshake: connect completes once the kernel accepts, which a silent server's"
                        + " listen backlog does",
                "garbageInsteadOfTheHandshakeIsDroppedAndTheServerKeepsServing",
                "wire=raw has no handshake: any bytes are the application's stream; the GVirtuS backend's own"
                        + " malformed-request tests cover garbage");

        @Override
        public ConditionEvaluationResult evaluateExecutionCondition(ExtensionContext context) {
            return context.getTestMethod().map(m -> NOT_FOR_RAW.get(m.getName()))
                    .map(ConditionEvaluationResult::disabled)
                    .orElse(ConditionEvaluationResult.enabled("a stream contract test that holds on wire=raw"));
        }
    }
}
