// Program otelcol is an OpenTelemetry Collector of two components (components.go), as the
// Collector Builder (ocb) writes one: the OTLP receiver and the file exporter, the trace sink of
// test/e2e/tracing.test.ts. Its config is a file (--config=PATH) that may name environment
// variables (${env:NAME}): the providers ocb's default distribution has, less the remote ones.
package main

import (
	"log"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/provider/envprovider"
	"go.opentelemetry.io/collector/confmap/provider/fileprovider"
	"go.opentelemetry.io/collector/otelcol"
)

// version is the collector release its components come from (hack/build-addons.sh sets it
// from OTELCOL_VERSION); `otelcol --version` prints it.
var version = "dev"

func main() {
	set := otelcol.CollectorSettings{
		BuildInfo: component.BuildInfo{
			Command:     "otelcol",
			Description: "OpenTelemetry Collector: OTLP receiver, file exporter (kubelet-ts tracing tests)",
			Version:     version,
		},
		Factories: components,
		ConfigProviderSettings: otelcol.ConfigProviderSettings{
			ResolverSettings: confmap.ResolverSettings{
				// otelcol.NewCommand makes env the default scheme, so it must be here.
				ProviderFactories: []confmap.ProviderFactory{envprovider.NewFactory(), fileprovider.NewFactory()},
			},
		},
	}
	if err := otelcol.NewCommand(set).Execute(); err != nil {
		log.Fatalf("collector server run finished with error: %v", err)
	}
}
