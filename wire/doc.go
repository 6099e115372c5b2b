// Package wire is weir's Kafka protocol adapter: the socket server that
// real Kafka clients talk to. It accepts TCP connections, reads
// size-prefixed request frames, parses the request header, decodes the body
// with franz-go's kmsg, serves ApiVersions itself from one table of served
// APIs (apis.go), hands every other request to a Handler, and writes the
// responses back in request order. It holds no broker state: BrokerHandler
// (handler.go) serves every other API by turning requests into actor
// messages and typed metadata requests (metadata.Request, decided by the
// controller, answered with a metadata.Result of Kafka error codes)
// against a Broker (broker.go), which package cluster implements.
//
// BrokerConn (broker_conn.go) is the other direction: a Kafka client
// connection from this broker to another one's listener, which the replica
// fetchers (actors/replicafetcher) send their Fetch requests over.
//
// Each Kafka API lives in a file named by its key (18_apiversions.go),
// opening with the versions served and the KIPs they involve. Internal
// errors map to Kafka error codes through internal/kafkaerr's one table
// (errors.go gives its answers in wire's KafkaError form).
//
// The caller (cluster.StartNode) uses it like this:
//
//  1. Build a Config from DefaultConfig: set ListenAddr (Kafka's listeners)
//     and the Logger, override the Kafka-named fields from the node's
//     config, and leave Intercept nil (it is a test seam).
//  2. Implement Handler. Handle is called once per request other than
//     ApiVersions, in request order for one connection and never twice at
//     once for it, concurrently across connections. Do in Handle what must
//     happen in request order (send the actor message: two produce requests
//     pipelined on one connection reach the partition actor in order) and
//     return at once; answer with Reply for what is known now, or with
//     Defer for what an actor answers later (a Fetch long poll, an acks=all
//     produce). A blocked Handle holds up its whole connection.
//  3. Answer every request exactly once: Reply with a kmsg response of the
//     request's key (wire sets its version to the request's; fill every
//     field the version has, empty rather than null where Kafka puts empty:
//     docs/clients.md rule 8); NoResponse only for an acks=0 Produce that
//     succeeded; CloseConnection for an acks=0 Produce that failed (rule 7)
//     and wherever Kafka itself closes. Anything else (a panic, the zero
//     Response, a reply of another key, NoResponse where a reply is due)
//     closes the connection with an error line: the Handler broke its
//     contract. Responses go out in request order whatever order they
//     complete in, and an acks=0 Produce keeps its place (rule 10).
//  4. Map internal errors with kafkaerr.Of / Code (or ErrorFor), and only
//     send codes the request's version can express (docs/clients.md
//     rule 12).
//  5. Honour ctx: it is canceled when the connection or the server closes,
//     and Handle and every deferred function must then return promptly;
//     Close waits for them.
//  6. Start with NewServer(cfg, handler) and Listen (or Serve with a
//     listener of the caller's, as tests do with 127.0.0.1:0); Addr gives
//     the bound address. Stop with Close, which stops accepting, closes
//     every connection and waits for every goroutine of the server.
//  7. To offer a new API, add its row to the table in apis.go (advertised
//     and served ranges; every advertised version must really work) and its
//     NN_name.go file; the Handler then receives it. Nothing else
//     registers an API.
//
// wire decides on its own what Kafka's socket server decides: a frame
// larger than socket.request.max.bytes or negative, a truncated frame, a
// malformed header, an unknown API key, a version outside the advertised
// range, or a body kmsg cannot decode closes that connection with one log
// line and touches no other connection. An ApiVersions request of any
// version gets an answer (UNSUPPORTED_VERSION in a v0 body for a version
// not served, docs/clients.md rule 3).
package wire
