package main

import (
	"fmt"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
)

// configFlag collects repeated --config key=value flags, in order.
type configFlag []configEntry

// configEntry is one key=value of a configFlag.
type configEntry struct{ key, value string }

// String returns the entries as given.
func (f *configFlag) String() string {
	parts := make([]string, len(*f))
	for i, e := range *f {
		parts[i] = e.key + "=" + e.value
	}
	return strings.Join(parts, ",")
}

// Set adds one key=value; the value may be empty, the key not, and a key
// may be given once.
func (f *configFlag) Set(s string) error {
	key, value, ok := strings.Cut(s, "=")
	key = strings.TrimSpace(key)
	switch {
	case !ok:
		return fmt.Errorf("%q is not key=value", s)
	case key == "":
		return fmt.Errorf("%q has no key", s)
	}
	for _, e := range *f {
		if e.key == key {
			return fmt.Errorf("config %q given twice", key)
		}
	}
	*f = append(*f, configEntry{key: key, value: value})
	return nil
}

// values returns the entries as CreateTopics takes them; nil when empty.
func (f configFlag) values() map[string]*string {
	if len(f) == 0 {
		return nil
	}
	m := make(map[string]*string, len(f))
	for _, e := range f {
		m[e.key] = kadm.StringPtr(e.value)
	}
	return m
}

// deleteConfigFlag collects repeated --delete-config key flags.
type deleteConfigFlag []string

// String returns the keys as given.
func (f *deleteConfigFlag) String() string { return strings.Join(*f, ",") }

// Set adds one key.
func (f *deleteConfigFlag) Set(s string) error {
	s = strings.TrimSpace(s)
	if s == "" || strings.Contains(s, "=") {
		return fmt.Errorf("%q is not a config key", s)
	}
	*f = append(*f, s)
	return nil
}

// alterations returns the incremental alterations that set the entries of
// set and delete the keys of del; a key in both is an error.
func alterations(set configFlag, del deleteConfigFlag) ([]kadm.AlterConfig, error) {
	var alters []kadm.AlterConfig
	for _, e := range set {
		alters = append(alters, kadm.AlterConfig{Op: kadm.SetConfig, Name: e.key, Value: kadm.StringPtr(e.value)})
	}
	for _, k := range del {
		for _, e := range set {
			if e.key == k {
				return nil, fmt.Errorf("config %q both set and deleted", k)
			}
		}
		alters = append(alters, kadm.AlterConfig{Op: kadm.DeleteConfig, Name: k})
	}
	return alters, nil
}
