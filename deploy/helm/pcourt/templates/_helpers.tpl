{{/*
The release's name prefix: the release name, or <release>-pcourt when the
release name does not already say pcourt.
*/}}
{{- define "pcourt.fullname" -}}
{{- if contains "pcourt" .Release.Name -}}
{{- .Release.Name | trunc 40 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-pcourt" .Release.Name | trunc 40 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{/* The name of one service's objects. (dict "root" $ "name" "readiness") */}}
{{- define "pcourt.name" -}}
{{- printf "%s-%s" (include "pcourt.fullname" .root) .name -}}
{{- end -}}

{{/* Selector labels: stable for the life of a Deployment. */}}
{{- define "pcourt.selectorLabels" -}}
app.kubernetes.io/name: {{ .name }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
{{- end -}}

{{- define "pcourt.labels" -}}
{{ include "pcourt.selectorLabels" . }}
app.kubernetes.io/part-of: pcourt
app.kubernetes.io/version: {{ .root.Values.image.tag | quote }}
app.kubernetes.io/managed-by: {{ .root.Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .root.Chart.Name .root.Chart.Version }}
{{- end -}}

{{/* A service's settings: the defaults, overridden by its own block. */}}
{{- define "pcourt.settings" -}}
{{- $own := index .root.Values.services .name | default dict -}}
{{- $s := mergeOverwrite (deepCopy .root.Values.defaults) (deepCopy $own) -}}
{{- /* a budget is minAvailable or maxUnavailable: the service's own replaces the default whole */ -}}
{{- if hasKey $own "podDisruptionBudget" -}}
{{- $_ := set $s "podDisruptionBudget" $own.podDisruptionBudget -}}
{{- end -}}
{{- toYaml $s -}}
{{- end -}}

{{/* An env var from a key of an existing Secret, when the Secret is named. */}}
{{- define "pcourt.secretEnv" -}}
{{- if .ref.name }}
- name: {{ .env }}
  valueFrom:
    secretKeyRef:
      name: {{ .ref.name | quote }}
      key: {{ .ref.key | quote }}
{{- end }}
{{- end -}}

{{/* What every service reads: libs/service, libs/httpserver, libs/redisclient, OTEL. */}}
{{- define "pcourt.commonEnv" -}}
{{- $v := .root.Values -}}
- name: POD_NAME
  valueFrom:
    fieldRef:
      fieldPath: metadata.name
- name: POD_NAMESPACE
  valueFrom:
    fieldRef:
      fieldPath: metadata.namespace
- name: HTTP_ADDR
  value: {{ printf ":%v" .settings.port | quote }}
- name: ADMIN_ADDR
  value: {{ printf ":%v" (add .settings.port 1000) | quote }}
- name: HTTP_SHUTDOWN_TIMEOUT
  value: {{ .settings.shutdownTimeout | quote }}
- name: LOG_LEVEL
  value: {{ $v.logLevel | quote }}
- name: KAFKA_BROKERS
  value: {{ required "kafka.brokers must name at least one broker" $v.kafka.brokers | join "," | quote }}
{{- if $v.kafka.tls.enabled }}
- name: KAFKA_TLS
  value: "true"
{{- if $v.kafka.tls.caSecret.name }}
- name: KAFKA_TLS_CA_FILE
  value: /etc/pcourt/kafka-ca/{{ $v.kafka.tls.caSecret.key }}
{{- end }}
{{- if $v.kafka.tls.serverName }}
- name: KAFKA_TLS_SERVER_NAME
  value: {{ $v.kafka.tls.serverName | quote }}
{{- end }}
{{- end }}
{{- if $v.kafka.sasl.mechanism }}
- name: KAFKA_SASL_MECHANISM
  value: {{ $v.kafka.sasl.mechanism | quote }}
- name: KAFKA_SASL_USERNAME
  value: {{ required "kafka.sasl.username is required with a SASL mechanism" $v.kafka.sasl.username | quote }}
{{- $_ := required "kafka.sasl.passwordSecret.name is required with a SASL mechanism" $v.kafka.sasl.passwordSecret.name }}
{{- include "pcourt.secretEnv" (dict "env" "KAFKA_SASL_PASSWORD" "ref" $v.kafka.sasl.passwordSecret) }}
{{- end }}
- name: REDIS_ADDRS
  value: {{ required "redis.addrs must name at least one address" $v.redis.addrs | join "," | quote }}
- name: REDIS_MODE
  value: {{ $v.redis.mode | quote }}
{{- if $v.redis.username }}
- name: REDIS_USERNAME
  value: {{ $v.redis.username | quote }}
{{- end }}
{{- if eq $v.redis.mode "sentinel" }}
- name: REDIS_SENTINEL_MASTER
  value: {{ required "redis.sentinelMaster is required in sentinel mode" $v.redis.sentinelMaster | quote }}
{{- end }}
{{- include "pcourt.secretEnv" (dict "env" "REDIS_PASSWORD" "ref" $v.redis.passwordSecret) }}
{{- include "pcourt.secretEnv" (dict "env" "REDIS_SENTINEL_PASSWORD" "ref" $v.redis.sentinelPasswordSecret) }}
{{- if $v.redis.poolSize }}
- name: REDIS_POOL_SIZE
  value: {{ $v.redis.poolSize | quote }}
{{- end }}
{{- if $v.redis.tls.enabled }}
- name: REDIS_TLS
  value: "true"
{{- if $v.redis.tls.caSecret.name }}
- name: REDIS_TLS_CA_FILE
  value: /etc/pcourt/redis-ca/{{ $v.redis.tls.caSecret.key }}
{{- end }}
{{- if $v.redis.tls.serverName }}
- name: REDIS_TLS_SERVER_NAME
  value: {{ $v.redis.tls.serverName | quote }}
{{- end }}
{{- end }}
- name: REDIS_DURABLE_WRITES
  value: {{ $v.redis.durableWrites.mode | quote }}
- name: REDIS_DURABLE_REPLICAS
  value: {{ $v.redis.durableWrites.replicas | quote }}
- name: REDIS_DURABLE_TIMEOUT
  value: {{ $v.redis.durableWrites.timeout | quote }}
- name: OTEL_SERVICE_NAME
  value: {{ .name | quote }}
{{- if $v.otel.endpoint }}
- name: OTEL_EXPORTER_OTLP_ENDPOINT
  value: {{ $v.otel.endpoint | quote }}
{{- end }}
{{- include "pcourt.secretEnv" (dict "env" "OTEL_EXPORTER_OTLP_HEADERS" "ref" $v.otel.headersSecret) }}
{{- if $v.otel.resourceAttributes }}
- name: OTEL_RESOURCE_ATTRIBUTES
  value: {{ $v.otel.resourceAttributes | quote }}
{{- end }}
{{- if $v.otel.tracesSampler }}
- name: OTEL_TRACES_SAMPLER
  value: {{ $v.otel.tracesSampler | quote }}
- name: OTEL_TRACES_SAMPLER_ARG
  value: {{ $v.otel.tracesSamplerArg | quote }}
{{- end }}
{{- /* The Go runtime follows a CPU limit, and without one (the chart sets
none) takes every CPU of the node: a 250m pod on a 64-CPU node would run 64
Ps and a collector sized for them. The request, rounded up, is what the pod
is scheduled for. An explicit GOMAXPROCS in env wins. */}}
{{- if and .settings.gomaxprocsFromCPURequest (not (hasKey (.settings.env | default dict) "GOMAXPROCS")) }}
- name: GOMAXPROCS
  valueFrom:
    resourceFieldRef:
      containerName: {{ .name }}
      resource: requests.cpu
      divisor: "1"
{{- end }}
{{- range $k, $val := .settings.env }}
- name: {{ $k }}
  value: {{ $val | quote }}
{{- end }}
{{- end -}}

{{/* The Redis and Kafka CA volumes and their mounts, when TLS names a CA Secret. */}}
{{- define "pcourt.redisCAVolume" -}}
{{- if and .Values.redis.tls.enabled .Values.redis.tls.caSecret.name }}
- name: redis-ca
  secret:
    secretName: {{ .Values.redis.tls.caSecret.name | quote }}
    items:
      - key: {{ .Values.redis.tls.caSecret.key | quote }}
        path: {{ .Values.redis.tls.caSecret.key | quote }}
{{- end }}
{{- if and .Values.kafka.tls.enabled .Values.kafka.tls.caSecret.name }}
- name: kafka-ca
  secret:
    secretName: {{ .Values.kafka.tls.caSecret.name | quote }}
    items:
      - key: {{ .Values.kafka.tls.caSecret.key | quote }}
        path: {{ .Values.kafka.tls.caSecret.key | quote }}
{{- end }}
{{- end -}}

{{- define "pcourt.redisCAMount" -}}
{{- if and .Values.redis.tls.enabled .Values.redis.tls.caSecret.name }}
- name: redis-ca
  mountPath: /etc/pcourt/redis-ca
  readOnly: true
{{- end }}
{{- if and .Values.kafka.tls.enabled .Values.kafka.tls.caSecret.name }}
- name: kafka-ca
  mountPath: /etc/pcourt/kafka-ca
  readOnly: true
{{- end }}
{{- end -}}

{{/*
One service: its Deployment, Service, HorizontalPodAutoscaler and
PodDisruptionBudget, and its ServiceAccount. Called from the service's own
template file with (dict "root" $ "name" "<service>" "env" <yaml list>
"volumes" <yaml list> "volumeMounts" <yaml list> "rbac" <bool>); the lists
are strings of YAML, possibly empty.
*/}}
{{- define "pcourt.workload" -}}
{{- $root := .root -}}
{{- $name := .name -}}
{{- $ctx := dict "root" $root "name" $name -}}
{{- $s := include "pcourt.settings" $ctx | fromYaml -}}
{{- $full := include "pcourt.name" $ctx -}}
{{- $port := int $s.port -}}
{{- $admin := add $port 1000 -}}
apiVersion: v1
kind: ServiceAccount
metadata:
  name: {{ $full }}
  labels:
    {{- include "pcourt.labels" $ctx | nindent 4 }}
automountServiceAccountToken: {{ .rbac | default false }}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ $full }}
  labels:
    {{- include "pcourt.labels" $ctx | nindent 4 }}
spec:
  {{- if not $s.autoscaling.enabled }}
  replicas: {{ $s.replicas }}
  {{- end }}
  revisionHistoryLimit: 5
  selector:
    matchLabels:
      {{- include "pcourt.selectorLabels" $ctx | nindent 6 }}
  strategy:
    type: RollingUpdate
    rollingUpdate:
      maxUnavailable: 0
      maxSurge: 1
  template:
    metadata:
      labels:
        {{- include "pcourt.labels" $ctx | nindent 8 }}
      {{- if or $root.Values.metrics.podAnnotations $s.podAnnotations }}
      annotations:
        {{- if $root.Values.metrics.podAnnotations }}
        prometheus.io/scrape: "true"
        prometheus.io/port: {{ $admin | quote }}
        prometheus.io/path: /metrics
        {{- end }}
        {{- with $s.podAnnotations }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
      {{- end }}
    spec:
      serviceAccountName: {{ $full }}
      automountServiceAccountToken: {{ .rbac | default false }}
      enableServiceLinks: false
      terminationGracePeriodSeconds: {{ include "pcourt.gracePeriodSeconds" (dict "name" $name "settings" $s) }}
      {{- with $root.Values.imagePullSecrets }}
      imagePullSecrets:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      securityContext:
        runAsNonRoot: true
        runAsUser: 65532
        runAsGroup: 65532
        fsGroup: 65532
        seccompProfile:
          type: RuntimeDefault
      # Nodes lacking a zone label are never eligible under a
      # DoNotSchedule zone rule: the zone rule is ScheduleAnyway unless the
      # values say every node has one. Tainted nodes the pod does not
      # tolerate are not counted as domains (nodeTaintsPolicy), so a
      # control-plane node cannot hold a hard node rule back.
      topologySpreadConstraints:
        - maxSkew: 1
          topologyKey: kubernetes.io/hostname
          whenUnsatisfiable: {{ $s.topologySpread.nodes }}
          nodeTaintsPolicy: Honor
          labelSelector:
            matchLabels:
              {{- include "pcourt.selectorLabels" $ctx | nindent 14 }}
          matchLabelKeys:
            - pod-template-hash
        - maxSkew: 1
          topologyKey: topology.kubernetes.io/zone
          whenUnsatisfiable: {{ $s.topologySpread.zones }}
          nodeTaintsPolicy: Honor
          labelSelector:
            matchLabels:
              {{- include "pcourt.selectorLabels" $ctx | nindent 14 }}
          matchLabelKeys:
            - pod-template-hash
      {{- with $s.nodeSelector }}
      nodeSelector:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with $s.tolerations }}
      tolerations:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      containers:
        - name: {{ $name }}
          image: {{ include "pcourt.image" (dict "root" $root "name" $name "settings" $s) | quote }}
          imagePullPolicy: {{ $root.Values.image.pullPolicy }}
          ports:
            - name: http
              containerPort: {{ $port }}
              protocol: TCP
            - name: admin
              containerPort: {{ $admin }}
              protocol: TCP
          env:
            {{- include "pcourt.commonEnv" (dict "root" $root "name" $name "settings" $s) | nindent 12 }}
            {{- with .env | default "" | trim }}
            {{- . | nindent 12 }}
            {{- end }}
          {{- $mounts := printf "%s\n%s" (include "pcourt.redisCAMount" $root | trim) (.volumeMounts | default "") | trim }}
          {{- if $mounts }}
          volumeMounts:
            {{- $mounts | nindent 12 }}
          {{- end }}
          # Probes on the admin port: it keeps answering while the public
          # one drains, and /readyz there turns 503 the moment draining
          # starts.
          startupProbe:
            httpGet:
              path: /livez
              port: admin
            periodSeconds: 2
            failureThreshold: 30
          livenessProbe:
            httpGet:
              path: /livez
              port: admin
            periodSeconds: 10
            timeoutSeconds: 2
            failureThreshold: 3
          readinessProbe:
            httpGet:
              path: /readyz
              port: admin
            periodSeconds: 5
            timeoutSeconds: 3
            failureThreshold: 2
          lifecycle:
            # Keep serving while endpoints and the ingress drop this pod;
            # SIGTERM (and draining) follows. A sleep action, not exec:
            # the image has no shell.
            preStop:
              sleep:
                seconds: {{ $s.preStopSleepSeconds }}
          resources:
            {{- toYaml $s.resources | nindent 12 }}
          securityContext:
            runAsNonRoot: true
            allowPrivilegeEscalation: false
            readOnlyRootFilesystem: true
            capabilities:
              drop:
                - ALL
      {{- $volumes := printf "%s\n%s" (include "pcourt.redisCAVolume" $root | trim) (.volumes | default "") | trim }}
      {{- if $volumes }}
      volumes:
        {{- $volumes | nindent 8 }}
      {{- end }}
---
apiVersion: v1
kind: Service
metadata:
  name: {{ $full }}
  labels:
    {{- include "pcourt.labels" $ctx | nindent 4 }}
spec:
  type: ClusterIP
  selector:
    {{- include "pcourt.selectorLabels" $ctx | nindent 4 }}
  ports:
    - name: http
      port: {{ $port }}
      targetPort: http
      protocol: TCP
    # /metrics and pprof: cluster-internal, never routed by the ingress.
    - name: admin
      port: {{ $admin }}
      targetPort: admin
      protocol: TCP
{{- if $s.autoscaling.enabled }}
---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: {{ $full }}
  labels:
    {{- include "pcourt.labels" $ctx | nindent 4 }}
spec:
  scaleTargetRef:
    apiVersion: apps/v1
    kind: Deployment
    name: {{ $full }}
  minReplicas: {{ $s.autoscaling.minReplicas }}
  maxReplicas: {{ $s.autoscaling.maxReplicas }}
  metrics:
    - type: Resource
      resource:
        name: cpu
        target:
          type: Utilization
          averageUtilization: {{ $s.autoscaling.targetCPUUtilizationPercentage }}
  behavior:
    scaleDown:
      stabilizationWindowSeconds: 300
{{- end }}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: {{ $full }}
  labels:
    {{- include "pcourt.labels" $ctx | nindent 4 }}
spec:
  {{- if hasKey $s.podDisruptionBudget "minAvailable" }}
  minAvailable: {{ $s.podDisruptionBudget.minAvailable }}
  {{- else }}
  maxUnavailable: {{ $s.podDisruptionBudget.maxUnavailable }}
  {{- end }}
  selector:
    matchLabels:
      {{- include "pcourt.selectorLabels" $ctx | nindent 6 }}
{{- if $root.Values.metrics.serviceMonitor.enabled }}
---
apiVersion: monitoring.coreos.com/v1
kind: ServiceMonitor
metadata:
  name: {{ $full }}
  labels:
    {{- include "pcourt.labels" $ctx | nindent 4 }}
    {{- with $root.Values.metrics.serviceMonitor.labels }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
spec:
  selector:
    matchLabels:
      {{- include "pcourt.selectorLabels" $ctx | nindent 6 }}
  endpoints:
    - port: admin
      path: /metrics
      interval: {{ $root.Values.metrics.serviceMonitor.interval }}
      # Keep the pods' own service="<name>" label, which every alert and
      # panel groups by: otherwise the Operator's target label "service"
      # (the Kubernetes Service's name) takes its place.
      honorLabels: true
{{- end }}
{{- end -}}

{{/* The services believe X-Forwarded-For from the pod network (the edge). */}}
{{- define "pcourt.trustedProxiesEnv" -}}
{{- with .Values.podNetworkCIDRs }}
- name: HTTP_TRUSTED_PROXIES
  value: {{ join "," . | quote }}
{{- end }}
{{- end -}}

{{/* readiness and filings: where partners reach them, and the facilitator. */}}
{{- define "pcourt.x402Env" -}}
- name: PUBLIC_BASE_URL
  value: {{ required "publicURL is required" .Values.publicURL | quote }}
- name: FACILITATOR_URL
  value: {{ required "facilitator.url is required" .Values.facilitator.url | quote }}
{{- include "pcourt.secretEnv" (dict "env" "FACILITATOR_AUTH_HEADER" "ref" .Values.facilitator.authHeaderSecret) }}
{{- end -}}


{{/*
A service's image: <repository>/<name>@<digest> when its image.digest is set,
else <repository>/<name>:<tag>, its own image.tag over the global one.
(dict "root" $ "name" "readiness" "settings" <the service's settings>)
*/}}
{{- define "pcourt.image" -}}
{{- $global := .root.Values.image -}}
{{- $own := .settings.image | default dict -}}
{{- $tag := $own.tag | default $global.tag | toString -}}
{{- if or (hasPrefix "sha256:" $tag) (contains "@" $tag) -}}
{{- fail (printf "the image tag of %s (%q) is a digest: set services.%s.image.digest instead" .name $tag .name) -}}
{{- end -}}
{{- if $own.digest -}}
{{- printf "%s/%s@%s" $global.repository .name $own.digest -}}
{{- else if $global.requireDigest -}}
{{- fail (printf "image.requireDigest: services.%s.image.digest must pin the image (sha256:<64 hex>)" .name) -}}
{{- else -}}
{{- printf "%s/%s:%s" $global.repository .name (required "image.tag is required" $tag) -}}
{{- end -}}
{{- end -}}

{{/*
How long each service's components after its HTTP server may take to stop,
in seconds. lifecycle.Run stops them one after the other, each once the one
before has returned, so their bounds add up:
  readiness, filings: the outbox relay and the reconciler stop at once (an
    entry read but not acknowledged stays pending and is published later);
  cases: the case-opened consumer finishes the message in hand (the Kafka
    consumer's DrainTimeout, 10 s), then the scheduler and the relay;
  webhooks: the consumer (10 s), then the sender waits for its sends in
    flight (WEBHOOK_ATTEMPT_TIMEOUT, 10 s);
  compat-edge: the legacy-use recorder's last flush (5 s);
  console, accounts, mcp: nothing after the server;
  compat-controller: controller-runtime's manager lets its reconcilers
    finish (its graceful shutdown timeout, 30 s).
Then every service closes its clients and flushes its traces: 5 s more.
*/}}
{{- define "pcourt.stopAfterDrainSeconds" -}}
{{- $after := dict "readiness" 0 "filings" 0 "cases" 10 "webhooks" 20 "compat-edge" 5 "console" 0 "accounts" 0 "mcp" 0 "compat-controller" 30 -}}
{{- if not (hasKey $after .) -}}
{{- fail (printf "pcourt.stopAfterDrainSeconds: no shutdown bound for %s" .) -}}
{{- end -}}
{{- add (index $after .) 5 -}}
{{- end -}}

{{/*
The grace period: the preStop sleep, the HTTP drain (shutdownTimeout, whole
seconds) and what stops after it. Derived, never a value of its own, so a
longer drain lengthens it too.
*/}}
{{- define "pcourt.gracePeriodSeconds" -}}
{{- $drain := .settings.shutdownTimeout | toString | trimSuffix "s" | atoi -}}
{{- if not (regexMatch "^[1-9][0-9]*s$" (.settings.shutdownTimeout | toString)) -}}
{{- fail (printf "shutdownTimeout of %s must be whole seconds, like 20s" .name) -}}
{{- end -}}
{{- add (int .settings.preStopSleepSeconds) $drain (include "pcourt.stopAfterDrainSeconds" .name | atoi) -}}
{{- end -}}
