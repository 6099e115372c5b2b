package main

import (
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/twmb/franz-go/pkg/kadm"
)

// clusterInfo is what `weir cluster info` prints (JSON field names in the
// tags).
type clusterInfo struct {
	ClusterID string `json:"cluster_id"`
	// ControllerID is the broker the Metadata answer names controller, -1
	// when none.
	ControllerID int32        `json:"controller_id"`
	Brokers      []brokerView `json:"brokers"`
}

// brokerView is one broker of the cluster.
type brokerView struct {
	NodeID int32  `json:"node_id"`
	Host   string `json:"host"`
	Port   int32  `json:"port"`
	// Address is host:port, as --bootstrap-server takes it.
	Address string `json:"address"`
	// Rack is the broker's broker.rack, nil when it has none.
	Rack *string `json:"rack"`
}

// newClusterInfo converts a Metadata answer; brokers in id order.
func newClusterInfo(md kadm.Metadata) clusterInfo {
	info := clusterInfo{ClusterID: md.Cluster, ControllerID: md.Controller, Brokers: []brokerView{}}
	for _, b := range md.Brokers {
		info.Brokers = append(info.Brokers, brokerView{NodeID: b.NodeID, Host: b.Host, Port: b.Port,
			Address: net.JoinHostPort(b.Host, strconv.Itoa(int(b.Port))), Rack: b.Rack})
	}
	return info
}

// brokerIDs returns the ids of the brokers, in order.
func (c clusterInfo) brokerIDs() []int32 {
	ids := make([]int32, len(c.Brokers))
	for i, b := range c.Brokers {
		ids[i] = b.NodeID
	}
	return ids
}

// writeText prints c as
//
//	ClusterId:     3Xh_pYxNSe6dcHZYJ5ZA9w
//	ControllerId:  1
//	ID  ADDRESS          RACK
//	1*  127.0.0.1:9092   rack-a
//
// The controller's id has a star, as rpk cluster info marks it; a broker
// without a rack shows "-".
func (c clusterInfo) writeText(w io.Writer) error {
	var b strings.Builder
	controller := "none"
	if c.ControllerID >= 0 {
		controller = strconv.Itoa(int(c.ControllerID))
	}
	fmt.Fprintf(&b, "ClusterId:     %s\nControllerId:  %s\n", c.ClusterID, controller)
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tADDRESS\tRACK")
	for _, br := range c.Brokers {
		id := strconv.Itoa(int(br.NodeID))
		if br.NodeID == c.ControllerID {
			id += "*"
		}
		rack := "-"
		if br.Rack != nil && *br.Rack != "" {
			rack = *br.Rack
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", id, br.Address, rack)
	}
	_ = tw.Flush() // b is a strings.Builder
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("write cluster info: %w", err)
	}
	return nil
}

// brokerConfigs is one broker's configs, as `weir cluster config describe
// --format json` prints them.
type brokerConfigs struct {
	Broker  int32        `json:"broker"`
	Configs []configView `json:"configs"`
}

// brokerConfig is one config of one broker, as `weir cluster config get
// --format json` prints it.
type brokerConfig struct {
	Broker int32 `json:"broker"`
	configView
}
