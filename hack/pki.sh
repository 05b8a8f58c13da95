#!/usr/bin/env bash
# Creates the local cluster's PKI with openssl under _output/local/pki and the kubeconfigs
# in _output/local. Keeps every existing cert that is still valid, signed by the current
# CA and issued for the same subject/SANs (recorded in NAME.spec); reissues the others.
# etcd listens on plain http on 127.0.0.1 only, so it has no certs.
source "$(dirname "$0")/lib.sh"
apt_install openssl
mkdir -p "$PKI" && chmod 700 "$PKI"
cd "$PKI"

key() { [ -s "$1.key" ] || { (umask 077; openssl genrsa -out "$1.key" 2048 2>/dev/null) || die "openssl genrsa $1 failed"; }; }

# ca NAME CN: a self-signed CA valid 10 years.
ca() {
  local name=$1 cn=$2
  if [ -s "$name.crt" ] && openssl x509 -in "$name.crt" -noout -checkend 2592000 >/dev/null 2>&1; then return 0; fi
  log "creating CA $name ($cn)"
  key "$name"
  cat > "$name.cnf" <<CNF
[req]
distinguished_name = dn
prompt = no
x509_extensions = ext
[dn]
CN = $cn
[ext]
basicConstraints = critical,CA:TRUE
keyUsage = critical,digitalSignature,keyEncipherment,keyCertSign
subjectKeyIdentifier = hash
CNF
  openssl req -x509 -new -config "$name.cnf" -key "$name.key" -days 3650 -sha256 -out "$name.crt" 2>/dev/null \
    || die "openssl could not create CA $name"
  rm -f "$name.cnf"
}

# cert NAME CA USAGE SUBJECT [SAN...]: a leaf cert (2 years) signed by CA.
# USAGE is clientAuth or serverAuth; SUBJECT like /O=system:masters/CN=kubernetes-admin;
# SANs like DNS:localhost IP:127.0.0.1.
cert() {
  local name=$1 ca=$2 usage=$3 subj=$4; shift 4
  local san; san=$(IFS=,; echo "$*")
  local spec="$ca|$usage|$subj|$san"
  if [ -s "$name.crt" ] && [ "$(cat "$name.spec" 2>/dev/null)" = "$spec" ] \
     && openssl x509 -in "$name.crt" -noout -checkend 2592000 >/dev/null 2>&1 \
     && openssl verify -CAfile "$ca.crt" "$name.crt" >/dev/null 2>&1; then
    return 0
  fi
  log "issuing $name ($subj${san:+ $san})"
  key "$name"
  { echo "basicConstraints = critical,CA:FALSE"
    echo "keyUsage = critical,digitalSignature,keyEncipherment"
    echo "extendedKeyUsage = $usage"
    echo "subjectKeyIdentifier = hash"
    echo "authorityKeyIdentifier = keyid"
    [ -z "$san" ] || echo "subjectAltName = $san"
  } > "$name.ext"
  openssl req -new -key "$name.key" -subj "$subj" -out "$name.csr" 2>/dev/null \
    && openssl x509 -req -in "$name.csr" -CA "$ca.crt" -CAkey "$ca.key" -set_serial "0x$(openssl rand -hex 16)" \
         -days 730 -sha256 -extfile "$name.ext" -out "$name.crt" 2>/dev/null \
    || die "openssl could not issue $name"
  rm -f "$name.csr" "$name.ext"
  echo "$spec" > "$name.spec"
}

# The first address of the service range is the in-cluster "kubernetes" Service.
svc_ip=$(awk -F'[./]' '{print $1"."$2"."$3"."$4+1}' <<<"$SERVICE_CIDR")

ca ca kubernetes
ca front-proxy-ca front-proxy-ca
cert apiserver ca serverAuth /CN=kube-apiserver \
  DNS:kubernetes DNS:kubernetes.default DNS:kubernetes.default.svc DNS:kubernetes.default.svc.cluster.local \
  DNS:localhost IP:127.0.0.1 "IP:$KTS_IP" "IP:$svc_ip"
cert apiserver-kubelet-client ca clientAuth /O=system:masters/CN=kube-apiserver-kubelet-client
cert front-proxy-client front-proxy-ca clientAuth /CN=front-proxy-client
cert admin ca clientAuth /O=system:masters/CN=kubernetes-admin
cert controller-manager ca clientAuth /CN=system:kube-controller-manager
cert scheduler ca clientAuth /CN=system:kube-scheduler

# Service-account token signing key pair.
key sa
[ -s sa.pub ] || openssl rsa -in sa.key -pubout -out sa.pub 2>/dev/null || die "openssl could not write sa.pub"

# Self-contained kubeconfigs (certs embedded) for the apiserver on $KTS_IP.
for pair in admin:kubernetes-admin controller-manager:system:kube-controller-manager scheduler:system:kube-scheduler; do
  c=${pair%%:*}; user=${pair#*:}
  write_kubeconfig "$LOCAL/$c.kubeconfig" "$user" \
    "client-certificate-data: $(base64 -w0 < "$c.crt")" "client-key-data: $(base64 -w0 < "$c.key")"
done
log "PKI ready in $PKI (kubeconfigs in $LOCAL)"
