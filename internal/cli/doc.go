// Package cli holds what every weir command shares: the flag parser, the
// broker list, the output format and the translation of client-library
// errors into words a user can act on. One package for all of it keeps the
// conventions the same across `weir topics`, `weir groups`, `weir cluster`,
// `weir produce`, `weir perf` and whatever comes next.
//
// Conventions:
//
//   - Flags may come before, between or after positional arguments, as with
//     Kafka's tools and rpk; "--" ends the flags. "-x" and "--x" name the
//     same flag. A flag may have several names (FlagSet.Alias): Kafka's
//     spelling beside weir's, or a one-letter short form.
//   - An unknown flag or command is a usage error (exit status 2) that names
//     the closest known one ("did you mean --topic?").
//   - Every command that talks to a broker takes --bootstrap-server (alias
//     --brokers) and falls back to the WEIR_BROKERS environment variable,
//     then to 127.0.0.1:9092 (AddConnFlags).
//   - Every command that lists or describes takes --format text|json
//     (AddFormatFlag); text is the default and follows Kafka's tools.
package cli
