# Merknera's image: the wheel built from this tree, installed into a slim Python, run as a
# user of its own with its data on a volume.  Not built in CI (see the README); its steps
# are (tests/e2e/test_e2e_wheel.py): pip wheel, pip install, merknera serve, the HEALTHCHECK.
#
#   docker build -t merknera .                       # with PostgreSQL's driver (compose.yaml)
#   docker build --build-arg EXTRAS= -t merknera .   # SQLite only: a smaller image
#   docker run -p 8080:8080 -v merknera:/var/lib/merknera merknera
#
# Every setting is MERKNERA_<KEY> in the environment (merknera serve --help lists them).

FROM python:3.11-slim AS build
WORKDIR /src
COPY pyproject.toml README.md LICENSE ./
COPY merknera ./merknera
COPY merknera_bots ./merknera_bots
RUN pip wheel --no-cache-dir --no-deps --wheel-dir /wheels .

FROM python:3.11-slim
ARG EXTRAS="[postgresql]"
COPY --from=build /wheels /wheels
RUN pip install --no-cache-dir "$(ls /wheels/merknera-*.whl)$EXTRAS" && rm -rf /wheels \
    && useradd --system --no-log-init --create-home --home-dir /var/lib/merknera merknera
USER merknera
WORKDIR /var/lib/merknera
VOLUME /var/lib/merknera
ENV MERKNERA_PORT=8080 \
    MERKNERA_DB=/var/lib/merknera/merknera.db \
    PYTHONUNBUFFERED=1
EXPOSE 8080
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
    CMD python -c "import os, urllib.request; urllib.request.urlopen('http://127.0.0.1:%s/healthz' % os.environ['MERKNERA_PORT'], timeout=4)"
CMD ["merknera", "serve", "--host", "0.0.0.0"]
