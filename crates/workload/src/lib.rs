//! storbench-workload: Workload sources: generators and synthesized published trace profiles.
