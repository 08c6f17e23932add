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
Call with (dict "root" $ "key" "MONIRO_REDIS_PASSWORD" "value" .Values.secrets.redisPassword "generate" true).
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

{{/* The five services, space-separated (each logs in to the release's NATS as the user of its name). */}}
{{- define "moniro.serviceNames" -}}
gateway agent-runner tool-executor scheduler signal-bridge
{{- end -}}

{{/*
Key of a service's NATS password, in the Secret and in the NATS pod's environment:
MONIRO_NATS_PASSWORD_<SERVICE> (passwordVariable in libs/bus/src/nats-permissions.ts).
Call with the service name.
*/}}
{{- define "moniro.natsPasswordKey" -}}
{{- printf "MONIRO_NATS_PASSWORD_%s" (. | upper | replace "-" "_") -}}
{{- end -}}

{{/*
Prefix of the JetStream stream names for subjectNamespace (createSubjects in
libs/envelopes): none for "moniro", else the namespace uppercased, every
character outside [A-Z0-9_] replaced by "_", and "_" (team-a: TEAM_A_).
*/}}
{{- define "moniro.streamPrefix" -}}
{{- if ne .Values.subjectNamespace "moniro" -}}
{{- printf "%s_" (regexReplaceAll "[^A-Z0-9_]" (upper .Values.subjectNamespace) "_") -}}
{{- end -}}
{{- end -}}

{{/*
The release's nats.conf: client port, monitoring, JetStream on /data, and one
user per service with only its subjects (files/nats-authorization.conf, written
by `npm run nats-config`), for subjectNamespace. The namespace goes in first: it
is lowercase, so it cannot spell the other placeholder; the prefix (uppercase)
could spell HELM_NAMESPACE (subjectNamespace helm_namespace).
*/}}
{{- define "moniro.natsConf" -}}
{{- $authorization := .Files.Get "files/nats-authorization.conf" -}}
{{- if not (contains "HELM_NAMESPACE" $authorization) -}}
{{- fail "files/nats-authorization.conf is missing from the chart or has no HELM_NAMESPACE placeholder: run 'npm run nats-config'" -}}
{{- end -}}
port: 4222
http_port: 8222
jetstream {
  store_dir: "/data"
}
{{ $authorization | replace "HELM_NAMESPACE" .Values.subjectNamespace | replace "HELM_STREAM_PREFIX" (include "moniro.streamPrefix" .) | trimSuffix "\n" }}
{{- end -}}

{{/*
The ACL rules of the services' user on the release's Redis, each quoted for sh:
redisAclRules(redis.prefix) of libs/store/src/redis-acl.ts (docs/redis-keys.md,
"The services' Redis user"): keys under the prefix only, no Pub/Sub channels,
every command but @dangerous, with INFO, CLIENT ID and CLIENT UNBLOCK given back.
A prefix that cannot be an ACL key pattern (empty, or with whitespace, '*', '?',
'[', ']' or '\', as redisAclRules refuses: JavaScript's \s spelled out for RE2)
fails the render.
*/}}
{{- define "moniro.redisAclRules" -}}
{{- $prefix := toString (.Values.redis.prefix | default "") -}}
{{- if or (eq $prefix "") (regexMatch `[\t\n\v\f\r\p{Zs}\x{2028}\x{2029}\x{feff}*?\[\]\\]` $prefix) -}}
{{- fail (printf "redis.prefix %q cannot be an ACL key pattern of the release's Redis user (docs/redis-keys.md, \"The services' Redis user\"): use a non-empty prefix of letters, digits, ':', '-', '_' or '.', without whitespace, '*', '?', '[', ']' or '\\'" $prefix) -}}
{{- end -}}
{{- $rules := list (printf "~%s*" $prefix) "resetchannels" "+@all" "-@dangerous" "+info" "+client|id" "+client|unblock" -}}
{{- range $i, $rule := $rules -}}
{{- if $i }} {{ end -}}
'{{ $rule | replace "'" "'\\''" }}'
{{- end -}}
{{- end -}}
