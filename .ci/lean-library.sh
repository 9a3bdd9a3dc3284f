#!/usr/bin/env bash
# The library as a user gets it: a scratch Maven project that depends on iwarp-bootstrap alone (the
# modules installed by `mvn install`) must resolve exactly the jars listed in
# iwarp-bootstrap/src/test/resources/mpa-user-dependencies.txt (Netty's modules and SLF4J, no Bouncy
# Castle, JNA, SCTP transport or native library), and an MPA RDMA program must run on that class path.
# Usage: .ci/lean-library.sh [maven args, e.g. -o -Dmaven.repo.local=...]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
version=$(sed -n 's:.*<version>\(.*-SNAPSHOT\)</version>.*:\1:p' "$root/pom.xml" | sed -n 1p)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat > "$work/pom.xml" <<POM
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>scratch</groupId>
  <artifactId>mpa-user</artifactId>
  <version>1</version>
  <dependencies>
    <dependency>
      <groupId>dev.iwarp</groupId>
      <artifactId>iwarp-bootstrap</artifactId>
      <version>$version</version>
    </dependency>
  </dependencies>
</project>
POM
(cd "$work" && mvn -B -q "$@" org.apache.maven.plugins:maven-dependency-plugin:3.8.1:list -DoutputFile=list.txt >"$work/mvn.log" 2>&1 \
  && mvn -B -q "$@" org.apache.maven.plugins:maven-dependency-plugin:3.8.1:build-classpath -Dmdep.outputFile=cp.txt >>"$work/mvn.log" 2>&1) || { cat "$work/mvn.log" >&2; exit 1; }
got=$(grep -E '^ +[^ ]+:[^ ]+:' "$work/list.txt" | sed -E 's/^ +//; s/ -- .*//; s/:(compile|runtime)$//' \
  | sed -E "s/:$version\$//" | sort)
want=$(grep -v '^#' "$root/iwarp-bootstrap/src/test/resources/mpa-user-dependencies.txt" | sed "s/\${version}/$version/" | sort)
if [ "$got" != "$want" ]; then
  echo "lean library: iwarp-bootstrap's dependencies changed; diff (< expected, > resolved):" >&2
  diff <(echo "$want") <(echo "$got") >&2 || true
  exit 1
fi
echo "lean library: iwarp-bootstrap alone brings $(echo "$got" | wc -l) jars: $(echo "$got" | cut -d: -f2 | tr '\n' ' ')"
# an MPA RDMA Write, Send and Read between two parties on that class path alone (no TLS, SCTP or native jars)
java -cp "$(cat "$work/cp.txt"):$root/examples/target/classes" \
  dev.iwarp.examples.RdmaWriteSendReadExample
