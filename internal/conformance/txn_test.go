package conformance

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// txnWait bounds how long a transactional producer may take to fail: far
// more than it needs, far less than the clients' own retry timeouts (kgo
// and librdkafka retry a retriable coordinator error for a minute and
// more), so a pass means the error was the fatal one.
const txnWait = 30 * time.Second

// transactionsUnsupported is what weir's answer says.
const transactionsUnsupported = "weir does not support transactions yet"

// TestTransactionalKgoFailsFast checks that a transactional franz-go
// producer fails BeginTransaction (or its first produce) with the
// non-retriable
// TRANSACTIONAL_ID_AUTHORIZATION_FAILED, not a timeout, and that an
// idempotent producer on the same broker keeps working.
func TestTransactionalKgoFailsFast(t *testing.T) {
	b := startBroker(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*txnWait)
	defer cancel()
	if err := kadmCreateTopic(ctx, b.Addr(), "txn-kgo", 1); err != nil {
		t.Fatal(err)
	}

	txn, err := kgo.NewClient(kgo.SeedBrokers(b.Addr()), kgo.TransactionalID("weir-conformance-txn"),
		kgo.DefaultProduceTopic("txn-kgo"), kgo.RecordDeliveryTimeout(2*txnWait))
	if err != nil {
		t.Fatal(err)
	}
	defer txn.Close()
	// kgo initializes the producer id in BeginTransaction (which takes no
	// context), or else at the first produce: either must fail.
	began := make(chan error, 1)
	go func() { began <- txn.BeginTransaction() }()
	select {
	case err = <-began:
	case <-time.After(txnWait):
		t.Fatalf("BeginTransaction still retrying after %v", txnWait)
	}
	if err == nil {
		pctx, pcancel := context.WithTimeout(ctx, txnWait)
		defer pcancel()
		err = txn.ProduceSync(pctx, kgo.StringRecord("in a transaction")).FirstErr()
	}
	if !errors.Is(err, kerr.TransactionalIDAuthorizationFailed) {
		t.Fatalf("transactional producer: %v, want TRANSACTIONAL_ID_AUTHORIZATION_FAILED at once", err)
	}

	idem, err := kgo.NewClient(kgo.SeedBrokers(b.Addr()), kgo.DefaultProduceTopic("txn-kgo"))
	if err != nil {
		t.Fatal(err)
	}
	defer idem.Close()
	if err := idem.ProduceSync(ctx, kgo.StringRecord("idempotent")).FirstErr(); err != nil {
		t.Fatalf("idempotent produce: %v", err)
	}
}

// TestTransactionalConfluentKafkaFailsFast checks that librdkafka's
// init_transactions() (confluent-kafka-python) fails with a fatal,
// non-retriable TRANSACTIONAL_ID_AUTHORIZATION_FAILED that carries weir's
// message, within the bound, rather than retrying
// COORDINATOR_NOT_AVAILABLE until its timeout.
func TestTransactionalConfluentKafkaFailsFast(t *testing.T) {
	needClient(t, "confluent-kafka", pythonAvailable("confluent_kafka"))
	b := startBroker(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*txnWait)
	defer cancel()
	// init_transactions' own timeout is txnWait: a timeout would end it
	// with _TIMED_OUT, which the checks below refuse.
	stdout, stderr, err := runTool(ctx, python, []string{filepath.Join("testdata", "confluent_kafka_txn.py"),
		b.Addr(), strconv.Itoa(int(txnWait / time.Second))}, nil)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	var out struct {
		OK        bool   `json:"ok"`
		Name      string `json:"name"`
		Fatal     bool   `json:"fatal"`
		Retriable bool   `json:"retriable"`
		Text      string `json:"text"`
	}
	if err := json.Unmarshal([]byte(strings.TrimSpace(stdout)), &out); err != nil {
		t.Fatalf("script printed %q: %v", stdout, err)
	}
	if out.OK || out.Name != "TRANSACTIONAL_ID_AUTHORIZATION_FAILED" || !out.Fatal || out.Retriable ||
		!strings.Contains(out.Text, transactionsUnsupported) {
		t.Fatalf("init_transactions: %+v, want a fatal TRANSACTIONAL_ID_AUTHORIZATION_FAILED saying %q", out, transactionsUnsupported)
	}
}
