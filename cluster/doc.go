// Package cluster assembles a weir node inside an actor system its caller
// owns: StartNode opens the data directory with package log, starts the
// metadata quorum (cluster/quorum, etcd raft on the __cluster_metadata-0
// log) in the metadata actor, registers the broker, starts a partition actor
// (actors/partition) for every partition replica the metadata image places
// on this node and keeps them in step with the image, and serves the Kafka
// protocol with package wire. Node.Stop undoes it all in reverse order and
// leaves a clean shutdown behind.
//
// It is the top of weir's import graph: cmd/weir's serve command is one
// program built on it, and programs that embed weir call it the same way:
//
//	system := actor.NewActorSystem()
//	cfg, _ := cluster.NewConfig(nil) // Kafka defaults, weir's departures
//	cfg.Broker.Override("log.dirs", "/var/lib/weir")
//	node, err := cluster.StartNode(system, cfg)
//	...
//	node.Stop()
//
// # The metadata actor
//
// One actor owns the quorum node and everything that follows from the
// image: it ticks raft, decides controller requests (metadata.Request, sent
// as a controllerRequest message with the PID to answer) one after another
// against the latest image plus the proposals in flight with
// metadata.Controller (so a request decided from the image never conflicts
// with one not yet applied), persists and applies what raft hands it, and
// after every applied batch reconciles the partition actors with the image
// (replicas.go) before it answers the requests that batch settled (a
// controllerReply carrying the typed metadata.Result). Both messages are
// plain data, ready to cross nodes. A caller of Node.Metadata therefore
// sees the partitions it created served when Metadata returns. The node's
// producer ids come from blocks the controller allocates to it
// (producer_ids.go), so no two brokers hand out the same id.
//
// On start, once the single voter leads, the actor writes the cluster's
// first record (its id) if the log is new, registers this process with a
// new broker epoch (which fences the previous process's registration and
// leaves its partitions leaderless), unfences it once the registration is
// applied, and then proposes itself as leader of every leaderless partition
// whose ISR holds it (elections.go): the election path that the replicated
// cluster uses too. The Kafka listener opens only when that is done.
package cluster
