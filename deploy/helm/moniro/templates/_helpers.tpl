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
