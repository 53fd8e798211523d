/* The static TLS probe of device_churn (device_churn.cpp, TlsProbe): one 8-byte variable with
   initial-exec TLS, so that dlopen gives it a block of static TLS at the top of what is in use. */
__attribute__((tls_model("initial-exec"))) __thread long slipstream_tls_probe;

__attribute__((visibility("default"))) long* slipstream_tls_probe_address(void) { return &slipstream_tls_probe; }
