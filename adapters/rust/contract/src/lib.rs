//! ahp-contract: the adapter contract (configs, transports, processes). Knows nothing of AHP effects.
