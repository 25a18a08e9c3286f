/**
 * What the command-line binaries share ({@link io.rdmacomm.cli.Cli}): picocli converters for endpoints, sizes and
 * durations, the one-line error reporting and exit codes every binary promises (2 for a bad command line, 1 for a
 * failure), and the logging set-up that keeps stdout for results.
 */
package io.rdmacomm.cli;
