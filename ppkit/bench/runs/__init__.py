"""Benchmark runs: the retrieval harness and its result types, baselines, answers, reproduce, verify, metrics, abstain, scale, peers, metadata, gold transfer."""
