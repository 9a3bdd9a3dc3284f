/**
 * Runnable examples of the library, each a {@code main} and a {@code run} method that
 * {@code ExamplesTest} calls: {@link dev.iwarp.examples.RdmaWriteSendReadExample} (two parties
 * over the verbs API: the STag and TO in MPA Private Data, an RDMA Write, a Send saying it landed,
 * an RDMA Read, a clean shutdown) and {@link dev.iwarp.examples.MpaPipelineExample} (MPA's
 * handlers in your own {@code ChannelInitializer}).
 */
package dev.iwarp.examples;
