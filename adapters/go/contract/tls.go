package contract

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
)

func certPool(file string) (*x509.CertPool, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(data) {
		return nil, errors.New("no PEM certificate in " + file)
	}
	return pool, nil
}

// ServerTLS serves files' certificate; with a CA file, client certificates
// chaining to it are required (and verified for client authentication).
func ServerTLS(files *TLSFiles) (*tls.Config, error) {
	cert, err := tls.LoadX509KeyPair(files.CertFile, files.KeyFile)
	if err != nil {
		return nil, fmt.Errorf("unusable certificate material: %v", err)
	}
	cfg := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	if files.CAFile != "" {
		pool, err := certPool(files.CAFile)
		if err != nil {
			return nil, fmt.Errorf("unusable client CA: %v", err)
		}
		cfg.ClientCAs = pool
		cfg.ClientAuth = tls.RequireAndVerifyClientCert
	}
	return cfg, nil
}

// ClientTLS verifies the server's chain against files.CAFile (else the
// system store) and its name; presents a client certificate when given.
func ClientTLS(files TLSFiles) (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if files.CAFile != "" {
		pool, err := certPool(files.CAFile)
		if err != nil {
			return nil, fmt.Errorf("unusable CA: %v", err)
		}
		cfg.RootCAs = pool
	}
	if files.CertFile != "" {
		cert, err := tls.LoadX509KeyPair(files.CertFile, files.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("unusable client certificate: %v", err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return cfg, nil
}
