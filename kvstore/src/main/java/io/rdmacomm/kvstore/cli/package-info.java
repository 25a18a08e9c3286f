/** The {@code kv-server} and {@code kv-client} command lines, and {@code kv-client bench}. */
package io.rdmacomm.kvstore.cli;
