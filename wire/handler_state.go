package wire

import (
	"github.com/weirmq/weir/actors/fetchsession"
)

// brokerAPIs holds the state that individual APIs keep across requests
// (fetch sessions, fetch memory). Each API adds its field here
// and its setup to init and teardown to close.
type brokerAPIs struct {
	// fetchSessions is the node's fetch session cache actor (01_fetch.go).
	fetchSessions *fetchsession.Client
	// fetchMemory bounds the record bytes of fetches in flight
	// (fetch_memory.go).
	fetchMemory *fetchMemory
	// followers decides the followers' position reports under fetch
	// sessions (01_fetch_replica.go).
	followers followerReports
}

func (a *brokerAPIs) init(h *BrokerHandler) error {
	cfg := fetchsession.DefaultConfig()
	if h.cfg.FetchSessions != nil {
		cfg = *h.cfg.FetchSessions
	}
	fs, err := fetchsession.Spawn(h.cfg.System, fetchsession.ActorConfig{Cache: cfg, Logger: h.log})
	if err != nil {
		return err
	}
	a.fetchSessions = fs
	size := h.cfg.FetchMemoryBytes
	if size <= 0 {
		size = DefaultFetchMemoryBytes
	}
	a.fetchMemory = newFetchMemory(size)
	return nil
}

func (a *brokerAPIs) close() error {
	if a.fetchSessions == nil {
		return nil
	}
	return a.fetchSessions.Stop()
}
