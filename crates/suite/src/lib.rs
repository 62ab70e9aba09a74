//! storbench-suite: Drive procedures: trace bench, consistency, seasoning, TRIM validation; resumable.
