# The Kafka-protocol broker of dev, tests and the e2e (tools/kafka-broker,
# kfake underneath), FROM scratch like the services. Its topics, records and
# group offsets live in /data: mount a volume there to keep them across
# restarts. Build context: bin/images/kafka-broker (see `make images`).
FROM scratch
COPY kafka-broker /service
# An empty directory owned by the runtime user, so a fresh named volume
# mounted here is writable without root.
COPY --chown=65532:65532 kafka-data /data
USER 65532:65532
ENV KAFKA_LISTEN_ADDR=:9092 KAFKA_DATA_DIR=/data
EXPOSE 9092
VOLUME /data
ENTRYPOINT ["/service"]
