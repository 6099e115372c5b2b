package failover

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// brokerConfigArgs writes Config.BrokerConfigs as a server.properties
// file and returns Config.WeirArgs with `--config FILE` added (weir
// serve's flags of the cluster's own settings override the file). The
// file lies in Config.TempDir until removeConfigFile. Without
// BrokerConfigs it returns WeirArgs.
func (r *runner) brokerConfigArgs() ([]string, error) {
	cfg := r.cfg
	if len(cfg.BrokerConfigs) == 0 {
		return cfg.WeirArgs, nil
	}
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(cfg.BrokerConfigs)) {
		fmt.Fprintf(&b, "%s=%s\n", k, cfg.BrokerConfigs[k])
	}
	f, err := os.CreateTemp(cfg.TempDir, "weir-bench-failover-*.properties")
	if err != nil {
		return nil, fmt.Errorf("broker configs: %w", err)
	}
	defer f.Close()
	if _, err := f.WriteString(b.String()); err != nil {
		return nil, fmt.Errorf("broker configs: %w", err)
	}
	path, err := filepath.Abs(f.Name())
	if err != nil {
		return nil, fmt.Errorf("broker configs: %w", err)
	}
	r.configFile = path
	return append([]string{"--config", path}, cfg.WeirArgs...), nil
}

// brokerConfigSettings states the broker configs, for the report.
func brokerConfigSettings(c Config) []string {
	var s []string
	for _, k := range slices.Sorted(maps.Keys(c.BrokerConfigs)) {
		s = append(s, fmt.Sprintf("%s=%s (--broker-config)", k, c.BrokerConfigs[k]))
	}
	return s
}

// removeConfigFile removes the file brokerConfigArgs wrote, if any.
func (r *runner) removeConfigFile() {
	if r.configFile != "" {
		_ = os.Remove(r.configFile)
	}
}
