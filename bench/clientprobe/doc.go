// Package clientprobe measures what Kafka clients at their default settings do
// while a partition's leader moves, so weir can answer in the way that lets
// them find the new leader on their first retry.
//
// A three-broker kfake cluster serves one single-partition topic. A client
// (franz-go in this process, or librdkafka through confluent-kafka in a
// /usr/bin/python3 child) produces a record every 2 ms. After a delay the
// leader "fails" in one of five ways (Scenario): it answers Produce with
// NOT_LEADER_OR_FOLLOWER without or with the KIP-951 leader hint, it dies
// (its listener and every open connection closed, so reconnects are
// refused) and its partition moves at once or only 400 ms later (Metadata
// naming the dead leader meanwhile), or the cluster goes through an
// election window in which Metadata reports LEADER_NOT_AVAILABLE. kfake control hooks observe every
// Metadata and Produce request and inject the errors; the measurement is
// the time from the failure to the client's next Metadata request and to
// its first Produce at the new leader, and how many requests it sent
// before that.
//
//	go test ./bench/clientprobe -run TestClientFailover -v
//
// runs one round per client and scenario; WEIR_MEASURE_FULL=1 the recorded
// counts (WEIR_MEASURE_ROUNDS, default 10, at two injection delays).
package clientprobe
