package netns

import (
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// Every name the package gives starts with one of these prefixes, then
// the tag of its Network: the creating process's id in base 36, "-", and
// a random suffix of tagRandLen base-36 digits. Interface names must stay within IFNAMSIZ-1 = 15
// bytes: "wnb" + at most 5 + 1 + 3 = 12 for the bridge, 15 for a veth end
// of host 999.
const (
	bridgePrefix = "wnb" // the bridge, root namespace
	nsPrefix     = "wnn" // a host's namespace: tag + "h" + index
	vethPrefix   = "wnv" // a host's veth end in the root namespace: tag + index
	tagRandLen   = 3
)

// maxIfName is the longest interface name Linux accepts (IFNAMSIZ - 1).
const maxIfName = 15

// newTag returns a fresh tag owned by this process.
func newTag() (string, error) {
	var b [tagRandLen]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("netns: random tag: %w", err)
	}
	const digits = "0123456789abcdefghijklmnopqrstuvwxyz"
	suffix := make([]byte, tagRandLen)
	for i, c := range b {
		suffix[i] = digits[int(c)%len(digits)]
	}
	return strconv.FormatInt(int64(os.Getpid()), 36) + "-" + string(suffix), nil
}

// tagOwner returns the process id a tag was made by.
func tagOwner(tag string) (int, bool) {
	owner, _, ok := strings.Cut(tag, "-")
	if !ok || owner == "" {
		return 0, false
	}
	pid, err := strconv.ParseInt(owner, 36, 32)
	if err != nil || pid <= 0 {
		return 0, false
	}
	return int(pid), true
}

// nameTag returns the tag inside a name the package gave, by its prefix.
func nameTag(name string) (string, bool) {
	for _, p := range []string{bridgePrefix, nsPrefix, vethPrefix} {
		rest, ok := strings.CutPrefix(name, p)
		if !ok {
			continue
		}
		// The tag's random suffix has a fixed length; a host index or
		// "h" and an index may follow.
		dash := strings.IndexByte(rest, '-')
		if dash <= 0 || len(rest) < dash+1+tagRandLen {
			return "", false
		}
		return rest[:dash+1+tagRandLen], true
	}
	return "", false
}

// abandoned reports whether name is one the package gave for a process
// that no longer runs: a leftover of a test binary that crashed or was
// killed before its cleanup.
func abandoned(name string) bool {
	tag, ok := nameTag(name)
	if !ok {
		return false
	}
	pid, ok := tagOwner(tag)
	if !ok || pid == os.Getpid() {
		return false
	}
	err := syscall.Kill(pid, 0)
	return errors.Is(err, syscall.ESRCH)
}

// bridgeName, nsName and vethName name the parts of the network of tag.
func bridgeName(tag string) string       { return bridgePrefix + tag }
func nsName(tag string, host int) string { return nsPrefix + tag + "h" + strconv.Itoa(host) }
func vethName(tag string, host int) string {
	return vethPrefix + tag + strconv.Itoa(host)
}
