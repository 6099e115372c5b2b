package wire

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// dialBroker connects a BrokerConn to s and closes it at the end of the
// test.
func dialBroker(t *testing.T, s *Server) *BrokerConn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), ioTimeout)
	defer cancel()
	c, err := DialBroker(ctx, s.Addr().String(), "broker-2")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// request sends req on c and returns its response as R.
func request[R kmsg.Response](t *testing.T, c *BrokerConn, req kmsg.Request) R {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), ioTimeout)
	defer cancel()
	resp, err := c.Request(ctx, req)
	if err != nil {
		t.Fatalf("%T v%d: %v", req, req.GetVersion(), err)
	}
	r, ok := resp.(R)
	if !ok {
		t.Fatalf("%T v%d answered with %T", req, req.GetVersion(), resp)
	}
	return r
}

// ApiVersions (header v0 answers, flexible from v3) and Metadata (header
// v1 and v2 requests, flexible responses from v9) round trip against the
// real API table.
func TestBrokerConnRoundTrips(t *testing.T) {
	s, b := startBroker(t, nil)
	createTopic(t, b, "bc", 2)
	c := dialBroker(t, s)
	for _, v := range []int16{0, 3, 4} {
		req := kmsg.NewPtrApiVersionsRequest()
		req.Version = v
		req.ClientSoftwareName, req.ClientSoftwareVersion = "weir", "test"
		resp := request[*kmsg.ApiVersionsResponse](t, c, req)
		if resp.ErrorCode != 0 || len(resp.ApiKeys) != len(apis) {
			t.Fatalf("ApiVersions v%d: code %d, %d keys, want %d", v, resp.ErrorCode, len(resp.ApiKeys), len(apis))
		}
	}
	for _, v := range []int16{1, 8, 9, 12} {
		req := metadataReq(v)
		mt := kmsg.NewMetadataRequestTopic()
		mt.Topic = kmsg.StringPtr("bc")
		req.Topics = append(req.Topics, mt)
		resp := request[*kmsg.MetadataResponse](t, c, req)
		if len(resp.Brokers) != 1 || len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 2 || resp.Topics[0].ErrorCode != 0 {
			t.Fatalf("Metadata v%d: %+v", v, resp)
		}
	}
}

// Concurrent requests on one connection each get their own answer.
func TestBrokerConnConcurrent(t *testing.T) {
	s, b := startBroker(t, nil)
	createTopic(t, b, "cc", 1)
	c := dialBroker(t, s)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for range 20 {
				if i%2 == 0 {
					req := kmsg.NewPtrApiVersionsRequest()
					req.Version = 3
					req.ClientSoftwareName, req.ClientSoftwareVersion = "weir", "test"
					if resp := request[*kmsg.ApiVersionsResponse](t, c, req); resp.ErrorCode != 0 {
						t.Errorf("ApiVersions: %d", resp.ErrorCode)
					}
					continue
				}
				if resp := request[*kmsg.MetadataResponse](t, c, metadataReq(12)); len(resp.Topics) != 1 {
					t.Errorf("Metadata: %d topics", len(resp.Topics))
				}
			}
		})
	}
	wg.Wait()
}

// A ctx that ends while the answer is awaited (a long-polled Fetch) fails
// the request with ctx's error and closes the connection; later requests
// fail at once with ErrBrokerConnClosed.
func TestBrokerConnCancel(t *testing.T) {
	s, b := startBroker(t, nil)
	createTopic(t, b, "cx", 1)
	c := dialBroker(t, s)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := c.Request(ctx, fetchReq(12, 60000, 1, 1<<20, fetchPart("cx", 0, 0, 1<<20)))
		done <- err
	}()
	// The fetch is parked once the server has a deferred request in
	// flight; cancel then.
	waitFor(t, func() bool { return s.Stats().Requests > 0 })
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("canceled fetch: %v, want context.Canceled", err)
	}
	_, err := c.Request(context.Background(), metadataReq(12))
	if !errors.Is(err, ErrBrokerConnClosed) {
		t.Fatalf("request after cancel: %v, want ErrBrokerConnClosed", err)
	}
	// A deadline works the same way.
	c = dialBroker(t, s)
	dctx, dcancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer dcancel()
	_, err = c.Request(dctx, fetchReq(12, 60000, 1, 1<<20, fetchPart("cx", 0, 0, 1<<20)))
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("fetch past its deadline: %v, want context.DeadlineExceeded", err)
	}
	if err := c.Close(); err != nil {
		t.Fatalf("close after failure: %v", err)
	}
}

// Close fails the exchange in progress and later ones.
func TestBrokerConnClose(t *testing.T) {
	s, b := startBroker(t, nil)
	createTopic(t, b, "cl", 1)
	c := dialBroker(t, s)
	done := make(chan error, 1)
	go func() {
		_, err := c.Request(context.Background(), fetchReq(12, 60000, 1, 1<<20, fetchPart("cl", 0, 0, 1<<20)))
		done <- err
	}()
	waitFor(t, func() bool { return s.Stats().Requests > 0 })
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err == nil {
		t.Fatal("request across Close succeeded")
	}
	if _, err := c.Request(context.Background(), metadataReq(12)); !errors.Is(err, ErrBrokerConnClosed) {
		t.Fatalf("request after Close: %v", err)
	}
}
