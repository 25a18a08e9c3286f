/**
 * The session protocol that {@code clientcomm} speaks to {@code servercomm} on top of any communicator: right
 * after connecting, the client sends a {@link io.rdmacomm.session.SessionRequest} naming an
 * {@link io.rdmacomm.session.Exchange} and its parameters; the server validates it, answers with a
 * {@link io.rdmacomm.session.SessionReply} and, if it accepted, runs the exchange's
 * {@link io.rdmacomm.session.ExchangeHandler} until the client ends the stream; inside an exchange the
 * server speaks in {@link io.rdmacomm.session.ExchangeResult}s. Handlers use only the
 * {@link io.rdmacomm.api.Communicator} contract (remote memory included), so every exchange runs on every
 * transport. New exchanges are a new enum constant and a handler registered with the
 * {@link io.rdmacomm.session.SessionDispatcher}.
 */
package io.rdmacomm.session;
