{{/* Chart name. */}}
{{- define "tandem.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Release-based prefix of resource names. */}}
{{- define "tandem.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/* Name of the coordinator StatefulSet, also the prefix of its pods (peer ids). */}}
{{- define "tandem.coordinator.fullname" -}}
{{- printf "%s-coordinator" (include "tandem.fullname" .) | trunc 52 | trimSuffix "-" }}
{{- end }}

{{/* Name of the coordinator's headless service (stable DNS name per peer). */}}
{{- define "tandem.coordinator.headless" -}}
{{- printf "%s-peers" (include "tandem.coordinator.fullname" .) | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Common labels. */}}
{{- define "tandem.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
app.kubernetes.io/part-of: {{ include "tandem.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{/* Selector labels of the coordinator peers. */}}
{{- define "tandem.coordinator.selectorLabels" -}}
app.kubernetes.io/name: {{ include "tandem.name" . }}-coordinator
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/* Selector labels of the mirror. */}}
{{- define "tandem.mirror.selectorLabels" -}}
app.kubernetes.io/name: {{ include "tandem.name" . }}-mirror
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/* Selector labels of the sample app. */}}
{{- define "tandem.sampleApp.selectorLabels" -}}
app.kubernetes.io/name: {{ include "tandem.name" . }}-sample-app
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/*
Peer list of the coordinator group: id=host:port for every pod of the StatefulSet, where the
id is the pod name and the host its DNS name under the headless service. Servers and clients
use the same list (tandem.coordinator.server.peers / tandem.coordinator.peers).
*/}}
{{- define "tandem.coordinator.peers" -}}
{{- $name := include "tandem.coordinator.fullname" . }}
{{- $headless := include "tandem.coordinator.headless" . }}
{{- $peers := list }}
{{- range $i := until (int .Values.coordinator.replicas) }}
{{- $peers = append $peers (printf "%s-%d=%s-%d.%s.%s.svc.%s:%d" $name $i $name $i $headless $.Release.Namespace $.Values.clusterDomain (int $.Values.coordinator.raftPort)) }}
{{- end }}
{{- join "," $peers }}
{{- end }}

{{/* Peers that must stay available: the configured value, else a majority. */}}
{{- define "tandem.coordinator.minAvailable" -}}
{{- if .Values.coordinator.podDisruptionBudget.minAvailable }}
{{- .Values.coordinator.podDisruptionBudget.minAvailable }}
{{- else }}
{{- add (div (int .Values.coordinator.replicas) 2) 1 }}
{{- end }}
{{- end }}
