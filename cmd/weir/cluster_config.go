package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/weirmq/weir/internal/cli"
)

// clusterConfigCommands is the table of `weir cluster config` commands.
var clusterConfigCommands = []cli.Command{
	{Name: "get", Summary: "print one broker config's value: get KEY [--broker N]", Run: runClusterConfigGet},
	{Name: "describe", Summary: "print every broker config with its value, source and synonyms, as kafka-configs.sh --entity-type brokers --describe --all", Run: runClusterConfigDescribe},
}

// runClusterConfig is `weir cluster config <command>`.
func runClusterConfig(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return cli.Dispatch(ctx, "cluster config", clusterConfigCommands, args, stdout, stderr)
}

// everyBroker is the --broker value that asks every broker of the cluster.
const everyBroker = -1

// addBrokerFlag registers --broker on fs.
func addBrokerFlag(fs *cli.FlagSet) *int {
	return fs.Int("broker", everyBroker, "ask only the broker with this `id`; -1: every broker of the cluster")
}

// runClusterConfigDescribe is `weir cluster config describe`. It prints,
// for each broker asked, "All configs for broker N are:" and one line a
// config, as kafka-configs.sh --describe --all does.
func runClusterConfigDescribe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := cli.NewFlagSet("cluster config describe", "[--broker N] [flags]", stderr)
	conn := cli.AddConnFlags(fs)
	broker := addBrokerFlag(fs)
	out := cli.AddFormatFlag(fs)
	if err := fs.ParseNoArgs(args); err != nil {
		return err
	}
	adm, ctx, err := conn.Admin(ctx)
	if err != nil {
		return err
	}
	defer adm.Close()
	all, err := describeBrokerConfigs(ctx, adm, int32(*broker), fs.Changed("broker"))
	if err != nil {
		return err
	}
	return out.Write(stdout, all, func(w io.Writer) error {
		for _, b := range all {
			if err := writeConfigBlock(w, fmt.Sprintf("All configs for broker %d are:", b.Broker), b.Configs); err != nil {
				return err
			}
		}
		return nil
	})
}

// runClusterConfigGet is `weir cluster config get KEY`. It prints the
// value alone (null when the broker withholds it or it has none), for
// scripts; the brokers asked must agree on it. JSON gives each broker's
// value, source and synonyms.
func runClusterConfigGet(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := cli.NewFlagSet("cluster config get", "KEY [--broker N] [flags]", stderr)
	conn := cli.AddConnFlags(fs)
	broker := addBrokerFlag(fs)
	out := cli.AddFormatFlag(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return fs.UsageError(errors.New("give one config KEY, as 'weir cluster config get log.retention.hours'"))
	}
	key := fs.Arg(0)
	adm, ctx, err := conn.Admin(ctx)
	if err != nil {
		return err
	}
	defer adm.Close()
	all, err := describeBrokerConfigs(ctx, adm, int32(*broker), fs.Changed("broker"))
	if err != nil {
		return err
	}
	got, err := pickBrokerConfig(all, key)
	if err != nil {
		return err
	}
	return out.Write(stdout, got, func(w io.Writer) error {
		if err := agreed(key, got); err != nil {
			return err
		}
		return writeLine(w, "%s", nullable(got[0].Value))
	})
}

// agreed returns an error naming each broker's value when the brokers
// of got disagree on config key.
func agreed(key string, got []brokerConfig) error {
	for _, c := range got[1:] {
		if nullable(c.Value) != nullable(got[0].Value) {
			parts := make([]string, len(got))
			for i, c := range got {
				parts[i] = fmt.Sprintf("broker %d: %s", c.Broker, nullable(c.Value))
			}
			return fmt.Errorf("the brokers disagree on %s (%s); name one with --broker", key, strings.Join(parts, ", "))
		}
	}
	return nil
}

// pickBrokerConfig returns config key of every broker described, or an
// error naming the closest config when a broker has no such config.
func pickBrokerConfig(all []brokerConfigs, key string) ([]brokerConfig, error) {
	var got []brokerConfig
	for _, b := range all {
		i := slices.IndexFunc(b.Configs, func(c configView) bool { return c.Name == key })
		if i < 0 {
			names := make([]string, len(b.Configs))
			for j, c := range b.Configs {
				names[j] = c.Name
			}
			err := fmt.Errorf("broker %d has no config %q", b.Broker, key)
			if s := cli.Suggest(key, names); s != "" {
				err = fmt.Errorf("%w: did you mean %q?", err, s)
			}
			return nil, err
		}
		got = append(got, brokerConfig{Broker: b.Broker, configView: b.Configs[i]})
	}
	return got, nil
}

// describeBrokerConfigs describes the configs of broker (when given) or of
// every broker of the cluster, in id order. Each broker answers for
// itself: franz-go sends a broker resource to the broker it names.
func describeBrokerConfigs(ctx context.Context, adm *cli.Admin, broker int32, given bool) ([]brokerConfigs, error) {
	md, err := adm.BrokerMetadata(ctx)
	if err != nil {
		return nil, adm.Explain(ctx, "describe cluster", err)
	}
	ids := newClusterInfo(md).brokerIDs()
	if given {
		if !slices.Contains(ids, broker) {
			return nil, fmt.Errorf("describe configs of broker %d: the cluster has no broker %d (its brokers: %s)", broker, broker, brokerList(ids))
		}
		ids = []int32{broker}
	}
	if len(ids) == 0 {
		return nil, errors.New("describe broker configs: the cluster answered with no brokers")
	}
	rcs, err := adm.DescribeBrokerConfigs(ctx, ids...)
	if err != nil {
		return nil, adm.Explain(ctx, "describe broker configs", err)
	}
	out := make([]brokerConfigs, 0, len(ids))
	for _, id := range ids {
		what := fmt.Sprintf("describe configs of broker %d", id)
		rc, err := rcs.On(strconv.Itoa(int(id)), nil)
		if err != nil {
			return nil, fmt.Errorf("%s: the broker did not answer for itself", what)
		}
		if rc.Err != nil {
			return nil, fmt.Errorf("%s: %w", what, cli.WithBrokerMessage(rc.Err, rc.ErrMessage))
		}
		out = append(out, brokerConfigs{Broker: id, Configs: newConfigViews(rc.Configs)})
	}
	return out, nil
}
