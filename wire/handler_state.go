package wire

// brokerAPIs holds the state that individual APIs keep across requests
// (fetch sessions, the producer-id block). Each API adds its field here
// and its setup to init and teardown to close.
type brokerAPIs struct{}

func (a *brokerAPIs) init(h *BrokerHandler) error { return nil }

func (a *brokerAPIs) close() error { return nil }
