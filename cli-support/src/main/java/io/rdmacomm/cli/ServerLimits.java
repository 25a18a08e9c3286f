package io.rdmacomm.cli;

import io.rdmacomm.api.CommunicatorProvider;
import io.rdmacomm.api.Communicators;
import io.rdmacomm.api.Endpoint;
import io.rdmacomm.api.EndpointOption;
import io.rdmacomm.api.support.DescriptorBudget;

/**
 * What a server binary may hold, decided as it starts (servercomm, kv-server): the sessions asked for and the
 * endpoint's {@code maxHandshakes}, reduced where the process's descriptor limit cannot hold them
 * ({@link DescriptorBudget}), and on a transport that holds descriptors per peer process the endpoint's
 * {@code maxPeers}, set to what the limit holds beside the sessions; with the line the server prints about it.
 *
 * @param endpoint the endpoint to serve, with {@code maxHandshakes} reduced where it had to be
 * @param maxSessions the sessions the server may hold at once
 * @param plan the budget behind both
 */
public record ServerLimits(Endpoint endpoint, int maxSessions, DescriptorBudget.Plan plan) {

    /**
     * The limits of a server of {@code endpoint} asked to hold {@code requestedSessions}, each costing the
     * transport's descriptors per connection plus {@code extraPerSession} (a control-plane connection, say).
     */
    public static ServerLimits of(Endpoint endpoint, int requestedSessions, int extraPerSession) {
        return of(endpoint, requestedSessions, extraPerSession, 0);
    }

    /**
     * As {@link #of(Endpoint, int, int)}, where each client process also holds {@code extraPerPeer} descriptors
     * of the server beside the transport's own per peer process (a control-plane connection its sessions share,
     * say): the plan's {@code maxPeers} then bounds those too.
     */
    public static ServerLimits of(Endpoint endpoint, int requestedSessions, int extraPerSession, int extraPerPeer) {
        CommunicatorProvider provider = Communicators.provider(endpoint.scheme());
        int perConnection = provider.descriptorsPerConnection(endpoint) + extraPerSession;
        boolean capped = EndpointOption.MAX_HANDSHAKES.appliesTo(endpoint.scheme());
        int handshakes = capped ? endpoint.intSize(EndpointOption.MAX_HANDSHAKES) : 1;
        boolean peersCapped = EndpointOption.MAX_PEERS.appliesTo(endpoint.scheme());
        int perPeer = (peersCapped ? provider.descriptorsPerPeerProcess(endpoint) : 0) + extraPerPeer;
        DescriptorBudget.Plan plan = DescriptorBudget.planWithPeers(requestedSessions, perConnection, perPeer,
                provider.descriptorsShared(endpoint), handshakes);
        Endpoint served = capped && plan.maxHandshakes() < handshakes
                ? endpoint.with(EndpointOption.MAX_HANDSHAKES, Integer.toString(plan.maxHandshakes()))
                : endpoint;
        if (peersCapped && perPeer > 0) {
            long asked = served.size(EndpointOption.MAX_PEERS);
            if (asked > plan.maxPeers()) {
                served = served.with(EndpointOption.MAX_PEERS, Integer.toString(plan.maxPeers()));
            }
        }
        return new ServerLimits(served, plan.maxConnections(), plan);
    }

    /** The line a server prints at start: {@code "servercomm: descriptors: limit 20000, ..."}. */
    public String describe(String server, String what) {
        return server + ": " + plan.describe(what);
    }
}
