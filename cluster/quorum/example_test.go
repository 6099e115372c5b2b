package quorum_test

import (
	"fmt"

	"github.com/weirmq/weir/cluster/metadata"
	"github.com/weirmq/weir/cluster/quorum"
	"github.com/weirmq/weir/log"
)

// A single voter: open the storage on the node's log directory, start the
// node, handle Ready until it is leader, propose, and read the image.
func Example() {
	fsys := log.NewMemFS()
	m, err := log.OpenManager(log.ManagerConfig{Dir: "/data", FS: fsys})
	if err != nil {
		panic(err)
	}
	defer m.Close()
	st, err := quorum.OpenStorage(m, fsys, []int32{1})
	if err != nil {
		panic(err)
	}
	n, err := quorum.NewNode(quorum.DefaultConfig(1), st)
	if err != nil {
		panic(err)
	}
	handle := func() {
		for n.HasReady() {
			if _, err := n.HandleReady(); err != nil { // a single voter sends nothing
				panic(err)
			}
		}
	}
	handle()
	err = n.Propose([]metadata.Record{metadata.ClusterCreatedRecord{ClusterID: "MkU3OEVBNTcwNTJENDM2Qg"}},
		func(index uint64, err error) { fmt.Println("committed at", index, err) })
	if err != nil {
		panic(err)
	}
	handle()
	img := n.Image()
	fmt.Println(n.IsLeader(), img.ClusterID(), img.ControllerID())
	// Output:
	// committed at 3 <nil>
	// true MkU3OEVBNTcwNTJENDM2Qg 1
}
