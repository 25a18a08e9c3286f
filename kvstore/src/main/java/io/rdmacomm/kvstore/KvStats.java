package io.rdmacomm.kvstore;

import io.rdmacomm.kvstore.proto.StatsReply;

/**
 * A server's figures at one moment.
 *
 * @param keys keys stored
 * @param poolBytes the memory pool's size
 * @param usedBytes bytes of the pool in allocated blocks (values, their 16-byte headers and alignment)
 * @param freeBytes bytes of the pool in free blocks
 * @param largestFreeBlock the largest value one allocation could take now
 * @param valueBytes bytes of the stored values themselves
 * @param sessions open sessions
 * @param gets GET requests served (both planes)
 * @param puts PUT requests served
 * @param deletes DELETE requests served
 * @param misses GETs and DELETEs of missing keys
 * @param errors other refused requests
 * @param sessionsFailed sessions ended by a failure of their data connection
 * @param dataEndpoint where the data plane listens
 */
public record KvStats(long keys, long poolBytes, long usedBytes, long freeBytes, long largestFreeBlock,
        long valueBytes, int sessions, long gets, long puts, long deletes, long misses, long errors,
        long sessionsFailed, String dataEndpoint) {

    /** External fragmentation: the share of free bytes outside the largest free block (0 = one free block). */
    public double fragmentation() {
        return freeBytes == 0 ? 0 : 1 - (double) Math.min(largestFreeBlock, freeBytes) / freeBytes;
    }

    static KvStats of(StatsReply r) {
        return new KvStats(r.getKeys(), r.getPoolBytes(), r.getUsedBytes(), r.getFreeBytes(),
                r.getLargestFreeBlock(), r.getValueBytes(), r.getSessions(), r.getGets(), r.getPuts(),
                r.getDeletes(), r.getMisses(), r.getErrors(), r.getSessionsFailed(), r.getDataEndpoint());
    }

    StatsReply toReply() {
        return StatsReply.newBuilder().setKeys(keys).setPoolBytes(poolBytes).setUsedBytes(usedBytes)
                .setFreeBytes(freeBytes).setLargestFreeBlock(largestFreeBlock).setValueBytes(valueBytes)
                .setSessions(sessions).setGets(gets).setPuts(puts).setDeletes(deletes).setMisses(misses)
                .setErrors(errors).setSessionsFailed(sessionsFailed).setDataEndpoint(dataEndpoint).build();
    }
}
