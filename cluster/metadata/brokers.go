package metadata

import "fmt"

// Broker is a broker's registration as the image holds it.
type Broker struct {
	// NodeID is the broker's node.id.
	NodeID int32
	// Epoch is the broker epoch of the current registration.
	Epoch int64
	// IncarnationID is the random id of the registering process.
	IncarnationID UUID
	// Host is the advertised Kafka listener's host.
	Host string
	// Port is the advertised Kafka listener's port.
	Port int32
	// ActorAddress is the protoactor remote address, "" without remoting.
	ActorAddress string
	// Rack is the broker.rack, "" if none.
	Rack string
	// Fenced brokers lead nothing, join no ISR and serve nothing.
	Fenced bool
	// RegisteredAt is the log offset of the registration record: a broker
	// that has applied the log up to it has caught up enough to be
	// unfenced (Kafka's registerBrokerRecordOffset). It is a fact of the
	// log, kept across snapshots (BrokerRegistrationRecord.RegisteredAt).
	RegisteredAt int64
}

// Addr returns the advertised Kafka listener as "host:port".
func (b Broker) Addr() string { return hostPort(b.Host, b.Port) }

func (b *Builder) applyBrokerRegistration(r BrokerRegistrationRecord, offset int64) error {
	if err := validateRegistration(r); err != nil {
		return err
	}
	if r.RegisteredAt < 0 || r.RegisteredAt > max(offset, 0) {
		return invalid("registered at offset %d, applied at offset %d", r.RegisteredAt, offset)
	}
	at := r.RegisteredAt
	if at == 0 {
		at = max(offset, 0)
	}
	if old, ok := b.img.brokers.get(r.NodeID); ok && r.BrokerEpoch <= old.Epoch {
		return fmt.Errorf("%w: epoch %d is not above the current epoch %d of node %d",
			ErrStaleBrokerEpoch, r.BrokerEpoch, old.Epoch, r.NodeID)
	}
	b.img.brokers.set(&b.own.brokers, r.NodeID, Broker{
		NodeID:        r.NodeID,
		Epoch:         r.BrokerEpoch,
		IncarnationID: r.IncarnationID,
		Host:          r.Host,
		Port:          r.Port,
		ActorAddress:  r.ActorAddress,
		Rack:          r.Rack,
		Fenced:        true,
		RegisteredAt:  at,
	})
	return nil
}

func validateRegistration(r BrokerRegistrationRecord) error {
	switch {
	case r.NodeID < 0:
		return invalid("node id %d is negative", r.NodeID)
	case r.BrokerEpoch < 0:
		return invalid("broker epoch %d is negative", r.BrokerEpoch)
	case r.IncarnationID.IsZero():
		return invalid("zero incarnation id")
	case r.Host == "":
		return invalid("empty listener host")
	case r.Port < 1 || r.Port > 65535:
		return invalid("listener port %d out of range 1-65535", r.Port)
	}
	return nil
}

// currentBroker returns node's registration if epoch is its current epoch.
func (img *Image) currentBroker(node int32, epoch int64) (Broker, error) {
	br, ok := img.brokers.get(node)
	if !ok {
		return Broker{}, fmt.Errorf("%w: node %d", ErrUnknownBroker, node)
	}
	if br.Epoch != epoch {
		return Broker{}, fmt.Errorf("%w: node %d epoch %d, current epoch %d",
			ErrStaleBrokerEpoch, node, epoch, br.Epoch)
	}
	return br, nil
}

func (b *Builder) applyBrokerFenced(node int32, epoch int64, fenced bool) error {
	br, err := b.img.currentBroker(node, epoch)
	if err != nil {
		return err
	}
	if br.Fenced != fenced {
		br.Fenced = fenced
		b.img.brokers.set(&b.own.brokers, node, br)
	}
	return nil
}

func (b *Builder) applyBrokerUnregistered(r BrokerUnregisteredRecord) error {
	if _, err := b.img.currentBroker(r.NodeID, r.BrokerEpoch); err != nil {
		return err
	}
	b.img.brokers.delete(&b.own.brokers, r.NodeID)
	return nil
}
