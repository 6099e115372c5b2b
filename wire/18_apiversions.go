package wire

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// ApiVersions (key 18), versions 0-4, served by wire alone from the table in
// apis.go; it never reaches the Handler.
//
//   - KIP-35 (v0): the client learns each key's version range.
//   - KIP-511 (v3): flexible request and response bodies, and the client
//     software name and version, which must match Kafka's pattern
//     [a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])? or get INVALID_REQUEST (42)
//     with no keys. Also from KIP-511: any version is accepted. One this
//     server does not serve (negative, or newer than 4: kgo sends v5 first)
//     is answered with a v0 body holding UNSUPPORTED_VERSION (35) and
//     ApiVersions' own range, as Kafka does (RequestContext treats such a
//     request as v0 and never parses its body); clients retry with a version
//     from that range (librdkafka with v0, kgo with the maximum).
//   - KIP-584 (v3 tags): supported and finalized features; weir finalizes
//     none (docs/clients.md rule 9), so both stay empty and the finalized
//     epoch is -1.
//   - KIP-1022 (v4): feature ranges may include 0; same body as v3.
//
// The response header is always v0, even for v3+ (docs/clients.md rule 3); the
// connection is never closed over ApiVersions, except for a body that a
// served version cannot decode.

// apiVersionsKey is ApiVersions' API key.
const apiVersionsKey = 18

// serveApiVersions answers a decoded ApiVersions request of a served
// version.
func (s *Server) serveApiVersions(req *Request) Response {
	resp := req.Body.ResponseKind().(*kmsg.ApiVersionsResponse)
	if r, ok := req.Body.(*kmsg.ApiVersionsRequest); ok && r.Version >= 3 {
		if !validSoftwareField(r.ClientSoftwareName) || !validSoftwareField(r.ClientSoftwareVersion) {
			resp.ErrorCode = kerr.InvalidRequest.Code
			return Reply(resp)
		}
	}
	for _, a := range s.apis {
		resp.ApiKeys = append(resp.ApiKeys, kmsg.ApiVersionsResponseApiKey{
			ApiKey:     a.Key,
			MinVersion: a.Advertised.Min,
			MaxVersion: a.Advertised.Max,
		})
	}
	return Reply(resp)
}

// unsupportedApiVersions is the v0 answer to an ApiVersions request whose
// version is not served: UNSUPPORTED_VERSION and ApiVersions' own range.
func (s *Server) unsupportedApiVersions() *kmsg.ApiVersionsResponse {
	resp := kmsg.NewPtrApiVersionsResponse()
	resp.Version = 0
	resp.ErrorCode = kerr.UnsupportedVersion.Code
	if a := s.index.lookup(apiVersionsKey); a != nil {
		resp.ApiKeys = []kmsg.ApiVersionsResponseApiKey{{
			ApiKey:     apiVersionsKey,
			MinVersion: a.Advertised.Min,
			MaxVersion: a.Advertised.Max,
		}}
	}
	return resp
}

// validSoftwareField reports whether s matches Kafka's pattern for the
// client software name and version: ASCII letters and digits at both ends,
// with letters, digits, '-' and '.' between.
func validSoftwareField(s string) bool {
	if s == "" || !isAlnum(s[0]) || !isAlnum(s[len(s)-1]) {
		return false
	}
	for i := 1; i < len(s)-1; i++ {
		if c := s[i]; !isAlnum(c) && c != '-' && c != '.' {
			return false
		}
	}
	return true
}

// isAlnum reports whether c is an ASCII letter or digit.
func isAlnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}
