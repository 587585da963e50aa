# syntax=docker/dockerfile:1
# Sluice container image: sluiced, sluicectl, sluice-cni and sluice-agent (the
# node controller, run as a second container of the DaemonSet) with their runtime
# libraries and DPDK's PMD plugins, nothing else. Build from the repository root:
#   docker build -t sluice:0.1.0 .
# The build stage installs dependencies and builds with the same commands as CI
# (scripts/setup.sh, then the CMake configure/build/install), so the image and
# the tests never disagree about what the project needs.

FROM debian:12 AS build
WORKDIR /src
# The set-up script alone first: its package layer stays cached until the
# dependency list changes. SLUICE_TEST_TOOLS=0 skips the test-only
# tools (cnitool, containerd, helm, Node packages): the image build
# does not run those tests, and that script is not in the context yet here.
COPY scripts/setup.sh scripts/setup.sh
RUN SLUICE_TEST_TOOLS=0 bash scripts/setup.sh
COPY . .
# Only the four programs the image ships: the tests and benchmarks are CI's
# (scripts/test.sh), and building them here would more than double the time.
# One compiler a core: a bare --parallel lets make start every job at once,
# each compiler taking up to half a gigabyte of memory.
RUN cmake -S . -B build -DSLUICE_BENCH=OFF \
 && cmake --build build --parallel "$(nproc)" --target sluiced sluicectl sluice-cni sluice-agent \
 && cmake --install build --strip
# Programs plus what they load at run time (shared libraries, the DPDK PMD
# plugin directory and its libraries), laid out under /runtime.
RUN bash scripts/collect-runtime.sh /runtime \
      /usr/local/bin/sluiced /usr/local/bin/sluicectl /usr/local/bin/sluice-cni /usr/local/bin/sluice-agent

FROM debian:12-slim
COPY --from=build /runtime/ /
# Root, because DPDK maps hugepages and devices and sluiced moves VF netdevs
# between network namespaces; the DaemonSet runs it privileged for the same
# reasons. Nothing else in the image needs it.
USER 0:0
# The sockets (API and vhost-user) live on the host: /var/run/sluice is a
# hostPath mount in the DaemonSet.
VOLUME ["/var/run/sluice"]
ENTRYPOINT ["/usr/local/bin/sluiced"]
HEALTHCHECK --interval=10s --timeout=5s --start-period=60s --retries=3 \
  CMD ["/usr/local/bin/sluicectl", "--socket", "/var/run/sluice/sluice.sock", "health"]
