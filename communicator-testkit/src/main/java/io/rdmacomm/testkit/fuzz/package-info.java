/**
 * What the fuzz tests of every module check about a parser of network bytes: that it either returns a value or
 * throws its declared exception (never another), and that it never allocates more than the caps allow however
 * large the lengths an input declares.
 */
package io.rdmacomm.testkit.fuzz;
