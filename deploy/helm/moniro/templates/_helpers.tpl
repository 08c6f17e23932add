{{/* Names and labels. */}}
{{- define "moniro.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 40 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 40 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "moniro.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
app.kubernetes.io/part-of: moniro
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
{{- end -}}

{{/* Labels of objects that belong to no single service. */}}
{{- define "moniro.instanceLabels" -}}
{{ include "moniro.labels" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{/* Selector labels of one service: call with (dict "root" $ "name" $name). */}}
{{- define "moniro.selectorLabels" -}}
app.kubernetes.io/name: {{ printf "moniro-%s" .name }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
{{- end -}}

{{- define "moniro.secretName" -}}
{{- if .Values.secrets.existingSecret -}}
{{- .Values.secrets.existingSecret -}}
{{- else -}}
{{- printf "%s-secrets" (include "moniro.fullname" .) -}}
{{- end -}}
{{- end -}}

{{- define "moniro.agentsConfigMap" -}}
{{- if .Values.agents.existingConfigMap -}}
{{- .Values.agents.existingConfigMap -}}
{{- else -}}
{{- printf "%s-agents" (include "moniro.fullname" .) -}}
{{- end -}}
{{- end -}}

{{- define "moniro.workflowsConfigMap" -}}
{{- if .Values.workflows.existingConfigMap -}}
{{- .Values.workflows.existingConfigMap -}}
{{- else -}}
{{- printf "%s-workflows" (include "moniro.fullname" .) -}}
{{- end -}}
{{- end -}}

{{- define "moniro.workspacesClaim" -}}
{{- if .Values.workspaces.persistence.existingClaim -}}
{{- .Values.workspaces.persistence.existingClaim -}}
{{- else -}}
{{- printf "%s-workspaces" (include "moniro.fullname" .) -}}
{{- end -}}
{{- end -}}

{{- define "moniro.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}

{{/* NATS URL the services use: the release's own NATS, or nats.url. */}}
{{- define "moniro.natsUrl" -}}
{{- if .Values.nats.deploy -}}
{{- if .Values.nats.url -}}
{{- fail "nats.url is set while nats.deploy is true: set nats.deploy=false to use your NATS at nats.url, or leave nats.url empty" -}}
{{- end -}}
{{- printf "nats://%s-nats:4222" (include "moniro.fullname" .) -}}
{{- else -}}
{{- required "nats.url is required when nats.deploy is false: the URL of your NATS (with JetStream)" .Values.nats.url -}}
{{- end -}}
{{- end -}}

{{/* Redis URL the services use: the release's own Redis, or redis.url. */}}
{{- define "moniro.redisUrl" -}}
{{- if .Values.redis.deploy -}}
{{- if .Values.redis.url -}}
{{- fail "redis.url is set while redis.deploy is true: set redis.deploy=false to use your Redis at redis.url, or leave redis.url empty" -}}
{{- end -}}
{{- printf "redis://%s-redis:6379" (include "moniro.fullname" .) -}}
{{- else -}}
{{- required "redis.url is required when redis.deploy is false: the URL of your Redis" .Values.redis.url -}}
{{- end -}}
{{- end -}}

{{/*
A password of the chart's Secret: the value given, else the one the Secret
already holds (kept on upgrades), else, when `generate`, a new random one
(letters and digits, starting with a letter, as NATS reads it from its config).
Call with (dict "root" $ "key" "MONIRO_NATS_PASSWORD" "value" .Values.secrets.natsPassword "generate" true).
*/}}
{{- define "moniro.password" -}}
{{- $kept := "" -}}
{{- $secret := lookup "v1" "Secret" .root.Release.Namespace (include "moniro.secretName" .root) -}}
{{- if $secret -}}
{{- $kept = index ($secret.data | default dict) .key | default "" | b64dec -}}
{{- end -}}
{{- $generated := "" -}}
{{- if .generate -}}
{{- $generated = printf "p%s" (randAlphaNum 31) -}}
{{- end -}}
{{- .value | default $kept | default $generated -}}
{{- end -}}

{{/* Pod settings of NATS and Redis: non-root, no service-account token. */}}
{{- define "moniro.serverContainerSecurity" -}}
allowPrivilegeEscalation: false
readOnlyRootFilesystem: true
capabilities:
  drop: ["ALL"]
seccompProfile:
  type: RuntimeDefault
{{- end -}}
