package config

import (
	"fmt"
	"io"
	"os"
)

// Property is one key/value pair of a Java properties file.
type Property struct {
	Key, Value string
	// Line is where the pair's logical line starts, from 1.
	Line int
}

// ReadPropertiesFile reads the pairs of a Java properties file in the
// format Parse accepts, in file order, without checking them against any
// table: for the client-side property files of weir's tools
// (`weir perf produce --producer.config`), whose names are the Java
// clients' configs. Errors name the file.
func ReadPropertiesFile(path string) ([]Property, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	props, err := ReadProperties(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return props, nil
}

// ReadProperties reads the pairs of a Java properties document; see
// ReadPropertiesFile.
func ReadProperties(r io.Reader) ([]Property, error) {
	raw, err := readProperties(r)
	if err != nil {
		return nil, err
	}
	out := make([]Property, len(raw))
	for i, p := range raw {
		out[i] = Property{Key: p.key, Value: p.value, Line: p.line}
	}
	return out, nil
}
