package main

import (
	"context"
	"io"

	"github.com/weirmq/weir/internal/cli"
)

// clusterCommands is the table of `weir cluster` commands, in the order the
// usage lists them. The group grows with the replicated cluster (brokers,
// partitions, leaders, reassignment): each command is one entry here and a
// file of its own, with the shared flags of internal/cli.
var clusterCommands = []cli.Command{
	{Name: "info", Summary: "print the cluster id, the controller and every broker's id, address and rack", Run: runClusterInfo},
	{Name: "config", Summary: "print broker configs with their values and sources: 'get KEY' or 'describe', as kafka-configs.sh --entity-type brokers", Run: runClusterConfig},
}

// runCluster is `weir cluster <command>`: the cluster as a whole, through
// any Kafka-compatible broker.
func runCluster(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return cli.Dispatch(ctx, "cluster", clusterCommands, args, stdout, stderr)
}

// runClusterInfo is `weir cluster info`: one Metadata request, as rpk
// cluster info (and kafka-cluster.sh cluster-id) answer it.
func runClusterInfo(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := cli.NewFlagSet("cluster info", "[flags]", stderr)
	conn := cli.AddConnFlags(fs)
	out := cli.AddFormatFlag(fs)
	if err := fs.ParseNoArgs(args); err != nil {
		return err
	}
	adm, ctx, err := conn.Admin(ctx)
	if err != nil {
		return err
	}
	defer adm.Close()
	md, err := adm.BrokerMetadata(ctx)
	if err != nil {
		return adm.Explain(ctx, "describe cluster", err)
	}
	info := newClusterInfo(md)
	return out.Write(stdout, info, info.writeText)
}
