package metadata

import (
	"fmt"
	"maps"
	"strconv"
)

// ResourceType is the kind of resource a config override belongs to, with
// Kafka's ConfigResource type codes.
type ResourceType uint8

// The resource types that carry config overrides.
const (
	ResourceTopic  ResourceType = 2
	ResourceBroker ResourceType = 4
)

// String returns the Kafka name of the resource type.
func (t ResourceType) String() string {
	switch t {
	case ResourceTopic:
		return "topic"
	case ResourceBroker:
		return "broker"
	}
	return "resource-type-" + strconv.Itoa(int(t))
}

// ConfigResource names the holder of config overrides: a topic by name, or
// a broker by node id in decimal ("" for the cluster-wide broker default).
type ConfigResource struct {
	Type ResourceType // ResourceTopic or ResourceBroker
	Name string       // the topic name, a broker's node id, or ""
}

// TopicResource is the config resource of the topic named name.
func TopicResource(name string) ConfigResource {
	return ConfigResource{Type: ResourceTopic, Name: name}
}

// BrokerResource is the config resource of broker node, or with node -1
// the cluster-wide broker default.
func BrokerResource(node int32) ConfigResource {
	if node < 0 {
		return ConfigResource{Type: ResourceBroker}
	}
	return ConfigResource{Type: ResourceBroker, Name: strconv.Itoa(int(node))}
}

// Config returns the raw overrides of res, key to value, as a new map the
// caller may keep; nil if there are none. Defaults are not merged in (that
// is the config table's job).
func (img *Image) Config(res ConfigResource) map[string]string {
	m, _ := img.configs.get(res)
	return maps.Clone(m)
}

// ConfigValue returns the override of key for res, if there is one.
func (img *Image) ConfigValue(res ConfigResource, key string) (string, bool) {
	m, _ := img.configs.get(res)
	v, ok := m[key]
	return v, ok
}

func (b *Builder) applyConfig(r ConfigRecord) error {
	res := ConfigResource{Type: r.ResourceType, Name: r.ResourceName}
	if err := b.img.checkConfigResource(res); err != nil {
		return err
	}
	if r.Name == "" {
		return fmt.Errorf("%w: empty config name", ErrInvalidConfig)
	}
	if r.Remove && r.Value != "" {
		return invalid("a removal carries the value %q", r.Value)
	}
	old, _ := b.img.configs.get(res)
	m := maps.Clone(old)
	if r.Remove {
		delete(m, r.Name)
	} else {
		if m == nil {
			m = make(map[string]string)
		}
		m[r.Name] = r.Value
	}
	if len(m) == 0 {
		// No empty maps: an image without overrides for res has no entry,
		// however it got there, so that equal images compare equal.
		b.img.configs.delete(&b.own.configs, res)
		return nil
	}
	b.img.configs.set(&b.own.configs, res, m)
	return nil
}

// checkConfigResource checks that res may hold overrides: an existing
// topic, or a broker named by a canonical decimal node id or "".
func (img *Image) checkConfigResource(res ConfigResource) error {
	switch res.Type {
	case ResourceTopic:
		if _, ok := img.Topic(res.Name); !ok {
			return fmt.Errorf("%w: %q", ErrUnknownTopic, res.Name)
		}
		return nil
	case ResourceBroker:
		if res.Name == "" {
			return nil
		}
		id, err := strconv.ParseInt(res.Name, 10, 32)
		if err != nil || id < 0 || strconv.FormatInt(id, 10) != res.Name {
			return fmt.Errorf("%w: broker resource %q is not a node id", ErrInvalidConfig, res.Name)
		}
		return nil
	}
	return fmt.Errorf("%w: resource type %d", ErrInvalidConfig, res.Type)
}

func mapsEqual(a, b map[string]string) bool { return maps.Equal(a, b) }
