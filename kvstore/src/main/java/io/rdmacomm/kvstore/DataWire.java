package io.rdmacomm.kvstore;

/**
 * The data connection's wire format, all big-endian. The connection starts with an attach that binds it to a
 * session opened over gRPC; then the client sends requests and reads one reply per request. One-sided (the
 * default, {@link ValueTransfer}), values never travel in these messages: a GET's value is put by the server into
 * the client's registered buffer before the reply, a PUT's value is got by the server from it before the reply.
 * Inline (the session's {@code values_inline}), a PUT's value follows its key and an OK GET reply is followed by the
 * value's bytes, which the client reads into its buffer at the offset it named.
 *
 * <pre>
 *   attach        u32 magic 'KVDP' | u16 version | u64 session id | u64 token
 *   attach reply  u8 status (0, or a KvException.Code) | u16 message length | UTF-8 message
 *   request       u8 op | u8 0 | u16 key length | u32 length | u64 buffer offset | key bytes [| value, inline PUT]
 *                   GET: length = bytes the client's buffer offers at the offset; PUT: the value's length there
 *   reply         u8 status | u8 0 | u16 0 | u32 length | u64 version [| value, inline GET with status 0]
 *                   GET: the value's length (placed at the offset), also with BUFFER_TOO_SMALL; PUT: 0
 * </pre>
 */
final class DataWire {
    static final int MAGIC = 0x4B564450;
    static final short VERSION = 1;
    static final int ATTACH_BYTES = 4 + 2 + 8 + 8;
    static final int REQUEST_BYTES = 16;
    static final int REPLY_BYTES = 16;
    static final byte GET = 1;
    static final byte PUT = 2;
    static final byte DELETE = 3;
    static final byte OK = 0;
    /** Keys are at most this long on the wire (u16). */
    static final int MAX_KEY = 0xffff;

    private DataWire() {
    }
}
