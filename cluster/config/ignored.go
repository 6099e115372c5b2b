package config

import "slices"

// ignoredBroker are Apache Kafka broker configs that a server.properties
// may set and weir accepts without using: thread counts, socket buffer
// sizes and request queues (weir's actors have no such pools), KRaft's
// process layout (every weir node is a broker and may be a voter; its
// metadata log lives in log.dirs), and the state topics of features weir
// does not have yet. A stock Kafka server.properties therefore starts
// weir; Broker.Ignored lists what it set, so the caller can say so. None
// of them changes what a client sees.
var ignoredBroker = map[string]bool{
	"background.threads":                               true,
	"controller.quorum.bootstrap.servers":              true,
	"log.cleaner.threads":                              true,
	"metadata.log.dir":                                 true,
	"num.io.threads":                                   true,
	"num.network.threads":                              true,
	"num.recovery.threads.per.data.dir":                true,
	"num.replica.fetchers":                             true,
	"process.roles":                                    true,
	"queued.max.requests":                              true,
	"share.coordinator.state.topic.min.isr":            true,
	"share.coordinator.state.topic.replication.factor": true,
	"socket.receive.buffer.bytes":                      true,
	"socket.send.buffer.bytes":                         true,
	"transaction.state.log.min.isr":                    true,
	"transaction.state.log.num.partitions":             true,
	"transaction.state.log.replication.factor":         true,
	"transaction.state.log.segment.bytes":              true,
}

// Ignored returns, sorted, the configs the file set that weir accepts
// without using (see ignoredBroker).
func (b *Broker) Ignored() []string {
	out := make([]string, 0, len(b.ignored))
	for name := range b.ignored {
		out = append(out, name)
	}
	slices.Sort(out)
	return out
}
