// apiload: the load generator of `make bench-api`. N clients call one HTTPS URL back to back
// over kept-alive connections for a fixed time, authenticating with a client certificate,
// and print one JSON line: latency percentiles, throughput, errors and the response size.
//
// It is written in Go rather than in the bench's TypeScript so that the clients cost little
// CPU and pause little for garbage collection: they share the machine with the kubelet they
// measure, and a slow client would show up as the kubelet's latency.
package main

import (
	"crypto/tls"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"sort"
	"sync"
	"time"
)

type result struct {
	Requests   int     `json:"requests"`
	Errors     int     `json:"errors"`
	PerSecond  float64 `json:"perSecond"`
	Bytes      int64   `json:"bytes"`
	P50        float64 `json:"p50"`
	P90        float64 `json:"p90"`
	P99        float64 `json:"p99"`
	Max        float64 `json:"max"`
	FirstError string  `json:"firstError,omitempty"`
}

func main() {
	url := flag.String("url", "", "the URL to GET")
	clients := flag.Int("clients", 50, "concurrent clients, each with its own connection")
	seconds := flag.Float64("seconds", 20, "how long to run")
	cert := flag.String("cert", "", "client certificate (PEM)")
	key := flag.String("key", "", "client key (PEM)")
	flag.Parse()
	if *url == "" || *cert == "" || *key == "" {
		fmt.Fprintln(os.Stderr, "apiload: -url, -cert and -key are required")
		os.Exit(2)
	}
	pair, err := tls.LoadX509KeyPair(*cert, *key)
	if err != nil {
		fmt.Fprintf(os.Stderr, "apiload: cannot load the client certificate: %v\n", err)
		os.Exit(2)
	}
	// The kubelet's serving certificate is self-signed or from a CSR: the bench measures, it does not verify.
	transport := &http.Transport{
		TLSClientConfig:     &tls.Config{Certificates: []tls.Certificate{pair}, InsecureSkipVerify: true},
		MaxIdleConnsPerHost: *clients, MaxConnsPerHost: *clients, DisableCompression: true,
	}
	client := &http.Client{Transport: transport, Timeout: 30 * time.Second}
	get := func() (time.Duration, int64, error) {
		t := time.Now()
		resp, err := client.Get(*url)
		if err != nil {
			return time.Since(t), 0, err
		}
		n, err := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if err == nil && resp.StatusCode != http.StatusOK {
			err = fmt.Errorf("HTTP %d", resp.StatusCode)
		}
		return time.Since(t), n, err
	}

	// Warm up: every client's connection open before the clock starts.
	var wg sync.WaitGroup
	for i := 0; i < *clients; i++ {
		wg.Add(1)
		go func() { defer wg.Done(); get() }()
	}
	wg.Wait()

	var mu sync.Mutex
	var r result
	var latencies []time.Duration
	end := time.Now().Add(time.Duration(*seconds * float64(time.Second)))
	for i := 0; i < *clients; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			mine := make([]time.Duration, 0, 4096)
			errors, firstError, bytes := 0, "", int64(0)
			for time.Now().Before(end) {
				d, n, err := get()
				mine = append(mine, d)
				if err != nil {
					errors++
					if firstError == "" {
						firstError = err.Error()
					}
				} else {
					bytes = n
				}
			}
			mu.Lock()
			latencies = append(latencies, mine...)
			r.Errors += errors
			if r.FirstError == "" {
				r.FirstError = firstError
			}
			if bytes > 0 {
				r.Bytes = bytes
			}
			mu.Unlock()
		}()
	}
	wg.Wait()

	sort.Slice(latencies, func(i, j int) bool { return latencies[i] < latencies[j] })
	ms := func(p float64) float64 {
		if len(latencies) == 0 {
			return 0
		}
		i := int(p/100*float64(len(latencies))+0.999999) - 1
		if i < 0 {
			i = 0
		}
		if i >= len(latencies) {
			i = len(latencies) - 1
		}
		return float64(latencies[i].Microseconds()) / 1000
	}
	r.Requests = len(latencies)
	r.PerSecond = float64(len(latencies)) / *seconds
	r.P50, r.P90, r.P99, r.Max = ms(50), ms(90), ms(99), ms(100)
	json.NewEncoder(os.Stdout).Encode(r)
}
