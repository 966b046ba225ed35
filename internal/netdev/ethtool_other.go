//go:build !linux

package netdev

import "errors"

// Ethtool reads drivers' statistics through SIOCETHTOOL, on Linux only.
type Ethtool struct{}

// OpenEthtool fails: SIOCETHTOOL is Linux's.
func OpenEthtool() (*Ethtool, error) { return nil, errors.ErrUnsupported }

// Close does nothing.
func (*Ethtool) Close() error { return nil }

// Stats fails: SIOCETHTOOL is Linux's.
func (*Ethtool) Stats(string) ([]Stat, error) { return nil, errors.ErrUnsupported }

// EthtoolStats fails: SIOCETHTOOL is Linux's.
func EthtoolStats(string) ([]Stat, error) { return nil, errors.ErrUnsupported }
