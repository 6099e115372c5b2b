package cluster

import (
	"github.com/weirmq/weir/actors/group"
	"github.com/weirmq/weir/actors/partition"
	"github.com/weirmq/weir/cluster/metadata"
	"github.com/weirmq/weir/log"
)

// Group coordinators follow the leadership of __consumer_offsets: the
// reconciler (replicas.go) tells coordinators when this node starts or
// stops leading one of its partitions, and the coordinator of that
// partition is loaded or unloaded (actors/group). The node's ticker ticks
// them; Node.Stop stops them before the partition actors.

// coordinators adapts the node's group.Coordinators to the reconciler. A
// nil *coordinators does nothing (a replica set built without one).
type coordinators struct {
	groups *group.Coordinators
}

// leadership tells the coordinators the leadership of one partition
// replica this node holds, which the reconciler just sent its actor.
func (c *coordinators) leadership(tp log.TopicPartition, client *partition.Client, p metadata.Partition, node int32) {
	if c == nil || tp.Topic != metadata.ConsumerOffsetsTopic {
		return
	}
	if p.Leader == node {
		c.groups.Load(tp.Partition, client, p.LeaderEpoch)
		return
	}
	c.groups.Unload(tp.Partition)
}

// topicsDeleted tells the coordinators the topics that were in old and
// are not in img (by topic id): their groups drop the offsets committed
// for them.
func (c *coordinators) topicsDeleted(old, img *metadata.Image) {
	if c == nil || old == nil {
		return
	}
	var names []string
	for _, t := range old.Topics() {
		if _, ok := img.TopicByID(t.ID()); !ok {
			names = append(names, t.Name())
		}
	}
	c.groups.TopicsDeleted(names)
}

// removed tells the coordinators a partition replica is gone (its topic
// deleted or the replica moved away).
func (c *coordinators) removed(tp log.TopicPartition) {
	if c == nil || tp.Topic != metadata.ConsumerOffsetsTopic {
		return
	}
	c.groups.Unload(tp.Partition)
}

// tick passes the node ticker's beat on.
func (c *coordinators) tick() {
	if c != nil {
		c.groups.Tick()
	}
}

// stop unloads every coordinator and waits for them.
func (c *coordinators) stop() error {
	if c == nil {
		return nil
	}
	return c.groups.Stop()
}

// startCoordinators builds the node's group coordinators from its broker
// configs.
func (n *Node) startCoordinators() (*coordinators, error) {
	cfg, err := group.ShellConfigFromBroker(n.cfg.Broker)
	if err != nil {
		return nil, err
	}
	cfg.Now, cfg.Logger = n.cfg.Now, n.log
	g, err := group.NewCoordinators(n.system, cfg)
	if err != nil {
		return nil, err
	}
	return &coordinators{groups: g}, nil
}
