//! ahp-sdk: the AHP implementation under test. No I/O, no knowledge of the interop contract.
